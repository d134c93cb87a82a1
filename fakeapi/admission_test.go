package fakeapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// reviews is a webhook server written from the admission/v1 contract: it
// records each AdmissionReview and answers what answer says.
type reviews struct {
	mu     sync.Mutex
	got    map[string][]admissionv1.AdmissionRequest // by path
	answer func(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

func (r *reviews) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(hr.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if r.got == nil {
		r.got = map[string][]admissionv1.AdmissionRequest{}
	}
	r.got[hr.URL.Path] = append(r.got[hr.URL.Path], *review.Request)
	r.mu.Unlock()
	resp := r.answer(hr.URL.Path, review.Request)
	resp.UID = review.Request.UID
	review.Response = resp
	review.Request = nil
	_ = json.NewEncoder(w).Encode(&review)
}

func (r *reviews) calls(path string) []admissionv1.AdmissionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[path]
}

// handlerTransport serves each request with h in the caller's goroutine.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// failingTransport is a webhook nobody answers.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

func url(path string) admissionregistrationv1.WebhookClientConfig {
	u := "https://webhook.example.com" + path
	return admissionregistrationv1.WebhookClientConfig{URL: &u}
}

var (
	none        = admissionregistrationv1.SideEffectClassNone
	configmaps  = []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	podsOnly    = []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}
	podGVR      = corev1.SchemeGroupVersion.WithResource("pods")
	secretGVR   = corev1.SchemeGroupVersion.WithResource("secrets")
	jsonPatchTy = admissionv1.PatchTypeJSONPatch
)

func mutatingConfig(name, path string, rules []admissionregistrationv1.RuleWithOperations) admissionregistrationv1.MutatingWebhookConfiguration {
	return admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: name, ClientConfig: url(path), Rules: rules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
}

func validatingConfig(name, path string, rules []admissionregistrationv1.RuleWithOperations) admissionregistrationv1.ValidatingWebhookConfiguration {
	return admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name, ClientConfig: url(path), Rules: rules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
}

// labelling adds the label team=lab; denying refuses objects labelled
// bad=true with "bad is not allowed".
func labellingAndDenying(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	switch path {
	case "/mutate":
		if req.Operation == admissionv1.Delete {
			return &admissionv1.AdmissionResponse{Allowed: true}
		}
		return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jsonPatchTy,
			Patch: []byte(`[{"op":"add","path":"/metadata/labels","value":{"team":"lab"}}]`)}
	case "/validate":
		obj := req.Object.Raw
		if req.Operation == admissionv1.Delete {
			obj = req.OldObject.Raw
		}
		if strings.Contains(string(obj), `"bad":"true"`) {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: "bad is not allowed"}}
		}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

func serverWith(t *testing.T, w fakeapi.Webhooks) *fakeapi.Server {
	t.Helper()
	s := fakeapi.NewServer(fakeapi.Options{})
	if err := s.SetWebhooks(w); err != nil {
		t.Fatalf("SetWebhooks: %v", err)
	}
	return s
}

func TestMutatingWebhookPatchesTheCreatedObjectAndSeesTheRequest(t *testing.T) {
	rv := &reviews{answer: labellingAndDenying}
	s := serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{mutatingConfig("label.example.com", "/mutate", configmaps)},
		Transport: handlerTransport{rv}})
	c := s.Client("alice")
	out, err := c.Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := out.(*corev1.ConfigMap).Labels["team"]; got != "lab" {
		t.Errorf("created object's label team = %q, want lab (the webhook's patch)", got)
	}
	stored, _ := c.Get(context.Background(), cmGVR, "ns", "a", metav1.GetOptions{})
	if got := stored.(*corev1.ConfigMap).Labels["team"]; got != "lab" {
		t.Errorf("stored label team = %q, want lab", got)
	}
	calls := rv.calls("/mutate")
	if len(calls) != 1 {
		t.Fatalf("webhook called %d times, want 1", len(calls))
	}
	r := calls[0]
	if r.Operation != admissionv1.Create || r.Kind != (metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) ||
		r.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}) || r.Namespace != "ns" ||
		r.Name != "a" || r.UserInfo.Username != "alice" || len(r.Object.Raw) == 0 || len(r.OldObject.Raw) != 0 || *r.DryRun {
		t.Errorf("review request = %+v", r)
	}
	// Secrets match no rule: no call.
	if _, err := c.Create(context.Background(), secretGVR, "ns", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(rv.calls("/mutate")); n != 1 {
		t.Errorf("a secret create called the configmaps webhook (%d calls)", n)
	}
}

func TestValidatingWebhookDenialIsKubeApiserversError(t *testing.T) {
	rv := &reviews{answer: labellingAndDenying}
	s := serverWith(t, fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{validatingConfig("deny.example.com", "/validate", configmaps)},
		Transport: handlerTransport{rv}})
	c := s.Client("alice")
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"bad": "true"}}}
	_, err := c.Create(context.Background(), cmGVR, "ns", bad, metav1.CreateOptions{})
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("create of a bad object: %v, want a status error", err)
	}
	// kube-apiserver: webhookerrors.ToStatusErr, code 400 when the webhook
	// sets none.
	want := `admission webhook "deny.example.com" denied the request: bad is not allowed`
	if st.Status().Message != want || st.Status().Code != 400 {
		t.Errorf("denial = %d %q, want 400 %q", st.Status().Code, st.Status().Message, want)
	}
	if s.Exists(cmGVR, "ns", "b") {
		t.Error("the denied object was stored")
	}
	// A good object goes in; an update that makes it bad is denied with
	// oldObject sent; its delete is admitted with oldObject only.
	good := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "g"}}
	if _, err := c.Create(context.Background(), cmGVR, "ns", good, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Patch(context.Background(), cmGVR, "ns", "g", types.MergePatchType, []byte(`{"metadata":{"labels":{"bad":"true"}}}`), metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("patch making it bad: %v, want the denial", err)
	}
	calls := rv.calls("/validate")
	last := calls[len(calls)-1]
	if last.Operation != admissionv1.Update || len(last.OldObject.Raw) == 0 || !strings.Contains(string(last.Object.Raw), `"bad":"true"`) {
		t.Errorf("patch's review: op %s old %d bytes object %s", last.Operation, len(last.OldObject.Raw), last.Object.Raw)
	}
	if err := c.Delete(context.Background(), cmGVR, "ns", "g", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	calls = rv.calls("/validate")
	last = calls[len(calls)-1]
	if last.Operation != admissionv1.Delete || len(last.Object.Raw) != 0 || len(last.OldObject.Raw) == 0 {
		t.Errorf("delete's review: op %s object %d bytes old %d bytes", last.Operation, len(last.Object.Raw), len(last.OldObject.Raw))
	}
}

func TestStaleUpdateCallsMutatingWebhookThenConflicts(t *testing.T) {
	rv := &reviews{answer: labellingAndDenying}
	s := serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{mutatingConfig("label.example.com", "/mutate", configmaps)},
		Transport: handlerTransport{rv}})
	c := s.Client("alice")
	out, err := c.Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm := out.(*corev1.ConfigMap)
	cm.Labels = nil // the webhook puts it back
	cm.Data = map[string]string{"k": "v"}
	upd, err := c.Update(context.Background(), cmGVR, "ns", cm.DeepCopy(), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if upd.(*corev1.ConfigMap).Labels["team"] != "lab" {
		t.Errorf("update removed the label the webhook sets: %v", upd.(*corev1.ConfigMap).Labels)
	}
	_, err = c.Update(context.Background(), cmGVR, "ns", cm, metav1.UpdateOptions{}) // cm's resourceVersion is stale now
	if !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want 409", err)
	}
	// kube-apiserver's update transformers run mutating admission before
	// the registry compares resourceVersions: create, update, stale update.
	if n := len(rv.calls("/mutate")); n != 3 {
		t.Errorf("mutating webhook called %d times, want 3", n)
	}
}

func TestWebhookStatusUpdatesMatchOnlySubresourceRules(t *testing.T) {
	rv := &reviews{answer: labellingAndDenying}
	s := serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{mutatingConfig("label.example.com", "/mutate", podsOnly)},
		Transport: handlerTransport{rv}})
	c := s.Client("kubelet")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	out, err := c.Create(context.Background(), podGVR, "ns", pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := out.(*corev1.Pod)
	p.Status.Phase = corev1.PodRunning
	if _, err := c.UpdateStatus(context.Background(), podGVR, "ns", p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(rv.calls("/mutate")); n != 1 {
		t.Errorf("webhook on pods called %d times, want 1 (pods/status is another resource to rules)", n)
	}
}

func TestFailurePolicyDecidesWhenTheWebhookCannotBeCalled(t *testing.T) {
	for _, tc := range []struct {
		policy admissionregistrationv1.FailurePolicyType
		wantOK bool
	}{{admissionregistrationv1.Fail, false}, {admissionregistrationv1.Ignore, true}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			cfg := validatingConfig("down.example.com", "/validate", configmaps)
			cfg.Webhooks[0].FailurePolicy = &tc.policy
			s := serverWith(t, fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{cfg}, Transport: failingTransport{}})
			_, err := s.Client("alice").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
			if tc.wantOK {
				if err != nil {
					t.Errorf("Ignore: create failed: %v", err)
				}
				return
			}
			// kube-apiserver: 500, `failed calling webhook "<name>": ...`.
			if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed calling webhook "down.example.com"`) {
				t.Errorf("Fail: %v, want 500 failed calling webhook", err)
			}
		})
	}
}

func TestWebhookCallingTheServerFailsInsteadOfHanging(t *testing.T) {
	var s *fakeapi.Server
	var callErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, callErr = s.Client("webhook").Create(r.Context(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "side"}}, metav1.CreateOptions{})
		(&reviews{answer: labellingAndDenying}).ServeHTTP(w, r)
	})
	s = serverWith(t, fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{validatingConfig("v.example.com", "/validate", configmaps)}, Transport: handlerTransport{h}})
	if _, err := s.Client("alice").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(callErr, fakeapi.ErrAdmissionReentry) && (callErr == nil || !strings.Contains(callErr.Error(), fakeapi.ErrAdmissionReentry.Error())) {
		t.Errorf("the webhook's own write: %v, want ErrAdmissionReentry", callErr)
	}
}

func TestSetWebhooksRefusesWhatTheAPIRefuses(t *testing.T) {
	cfg := mutatingConfig("m.example.com", "/mutate", configmaps)
	cfg.Webhooks[0].SideEffects = nil
	err := fakeapi.NewServer(fakeapi.Options{}).SetWebhooks(fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{cfg}, Transport: failingTransport{}})
	if err == nil || !strings.Contains(err.Error(), "sideEffects is required") {
		t.Errorf("no sideEffects: %v", err)
	}
	if err := fakeapi.NewServer(fakeapi.Options{}).SetWebhooks(fakeapi.Webhooks{}); err == nil || !strings.Contains(err.Error(), "Transport is nil") {
		t.Errorf("no transport: %v", err)
	}
}

// TestReinvocationPolicyIfNeededCallsAnEarlierWebhookAgain: kube-apiserver
// reinvokes a mutating webhook whose reinvocationPolicy is IfNeeded when a
// later one changed the object; with Never it is called once.
func TestReinvocationPolicyIfNeededCallsAnEarlierWebhookAgain(t *testing.T) {
	for _, tc := range []struct {
		policy admissionregistrationv1.ReinvocationPolicyType
		want   string
	}{{admissionregistrationv1.IfNeededReinvocationPolicy, "1"}, {admissionregistrationv1.NeverReinvocationPolicy, "none"}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			rv := &reviews{answer: func(path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
				var cm corev1.ConfigMap
				_ = json.Unmarshal(req.Object.Raw, &cm)
				var patch string
				switch path {
				case "/a": // copies label b into label a
					b := cm.Labels["b"]
					if b == "" {
						b = "none"
					}
					patch = `[{"op":"add","path":"/metadata/labels","value":{"a":"` + b + `"` + map[bool]string{true: `,"b":"` + cm.Labels["b"] + `"`}[cm.Labels["b"] != ""] + `}}]`
				case "/b": // sets label b=1
					labels := map[string]string{"b": "1"}
					for k, v := range cm.Labels {
						if k != "b" {
							labels[k] = v
						}
					}
					raw, _ := json.Marshal(labels)
					patch = `[{"op":"add","path":"/metadata/labels","value":` + string(raw) + `}]`
				}
				return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jsonPatchTy, Patch: []byte(patch)}
			}}
			// Configurations run in name order: "1-a" before "2-b".
			a := mutatingConfig("1-a", "/a", configmaps)
			a.Webhooks[0].ReinvocationPolicy = &tc.policy
			s := serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{a, mutatingConfig("2-b", "/b", configmaps)},
				Transport: handlerTransport{rv}})
			out, err := s.Client("alice").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*corev1.ConfigMap).Labels["a"]; got != tc.want {
				t.Errorf("label a = %q, want %q (calls of /a: %d)", got, tc.want, len(rv.calls("/a")))
			}
		})
	}
}

// TestDryRunRefusesWebhooksWithSideEffects: a dry-run
// request calls a webhook with sideEffects None (dryRun true in the
// review); one with sideEffects Some refuses the request, as
// kube-apiserver's dispatcher does.
func TestDryRunRefusesWebhooksWithSideEffects(t *testing.T) {
	rv := &reviews{answer: labellingAndDenying}
	s := serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{mutatingConfig("label.example.com", "/mutate", configmaps)},
		Transport: handlerTransport{rv}})
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	out, err := s.Client("alice").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, dry)
	if err != nil || out.(*corev1.ConfigMap).Labels["team"] != "lab" {
		t.Fatalf("dry-run create: %v %v, want the webhook's label", out, err)
	}
	if calls := rv.calls("/mutate"); len(calls) != 1 || calls[0].DryRun == nil || !*calls[0].DryRun {
		t.Errorf("dry-run review: %+v", calls)
	}
	some := admissionregistrationv1.SideEffectClassSome
	cfg := mutatingConfig("effects.example.com", "/mutate", configmaps)
	cfg.Webhooks[0].SideEffects = &some
	s = serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{cfg}, Transport: handlerTransport{rv}})
	_, err = s.Client("alice").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, dry)
	if err == nil || !strings.Contains(err.Error(), "does not support dry run") {
		t.Errorf("dry run through a webhook with side effects: %v", err)
	}
}

// TestNamespaceSelectorSeesTheNamespacesName: a namespace the lab never
// created matches a selector on kubernetes.io/metadata.name, as a
// cluster's namespaces carry that label.
func TestNamespaceSelectorSeesTheNamespacesName(t *testing.T) {
	rv := &reviews{answer: labellingAndDenying}
	cfg := mutatingConfig("label.example.com", "/mutate", configmaps)
	cfg.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "team"}}
	s := serverWith(t, fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{cfg}, Transport: handlerTransport{rv}})
	c := s.Client("alice")
	for _, ns := range []string{"team", "other"} {
		if _, err := c.Create(context.Background(), cmGVR, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	calls := rv.calls("/mutate")
	if len(calls) != 1 || calls[0].Namespace != "team" {
		t.Errorf("calls = %d (%v), want one, in namespace team", len(calls), calls)
	}
}

// TestAWebhookWaitingForTheServerEndsAtItsTimeout: a webhook that waits
// for a write another goroutine makes holds that write back, since the
// server serves no write while a write is admitted (reads it serves:
// admission_reads_test.go); its timeoutSeconds ends the call (in virtual
// time), the failurePolicy decides, and the write is served after.
func TestAWebhookWaitingForTheServerEndsAtItsTimeout(t *testing.T) {
	for _, policy := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Ignore, admissionregistrationv1.Fail} {
		t.Run(string(policy), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s *fakeapi.Server
				served := make(chan error, 1)
				var once sync.Once
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// The first call (x's) starts the writer of y; y's own
					// call, after x's, is never answered either: y's create
					// returns after its own timeout, and then no call is
					// left in flight when the pipe closes.
					once.Do(func() {
						go func() {
							_, err := s.Client("writer").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}, metav1.CreateOptions{})
							served <- err
						}()
					})
					<-r.Context().Done() // never answered: the create waits for this call
				})
				cfg := validatingConfig("waits.example.com", "/validate", configmaps)
				cfg.Webhooks[0].TimeoutSeconds = ptr.To[int32](2)
				cfg.Webhooks[0].FailurePolicy = &policy
				pipe := fakehttp.NewPipe(h)
				s = serverWith(t, fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{cfg}, Transport: pipe})
				start := time.Now()
				_, err := s.Client("alice").Create(context.Background(), cmGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
				if took := time.Since(start); took != 2*time.Second {
					t.Errorf("the create took %v (virtual), want the webhook's 2s timeout", took)
				}
				switch {
				case policy == admissionregistrationv1.Ignore && err != nil:
					t.Errorf("Ignore: %v", err)
				case policy == admissionregistrationv1.Fail && (err == nil || !strings.Contains(err.Error(), `failed calling webhook "waits.example.com"`)):
					t.Errorf("Fail: %v", err)
				}
				if err := <-served; policy == admissionregistrationv1.Ignore && err != nil {
					t.Errorf("the held-back create: %v, want y created after the call", err)
				}
				pipe.Close()
			})
		})
	}
}
