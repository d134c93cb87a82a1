package fakeapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// A webhook that reads from the API server (controller-runtime's
// mgr.GetAPIReader(), a typed clientset): in kube-apiserver admission runs
// before storage and other requests are served meanwhile, so its GET and
// LIST see the state before the write being admitted.

// readingWebhook is a webhook server whose answer may call the API server
// with the context ctxOf gives (the request's, as controller-runtime hands
// it to a handler, or another).
type readingWebhook struct {
	ctxOf  func(r *http.Request) context.Context
	answer func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

func (h *readingWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	resp := h.answer(h.ctxOf(r), review.Request)
	resp.UID = review.Request.UID
	review.Response, review.Request = resp, nil
	_ = json.NewEncoder(w).Encode(&review)
}

// contexts are the contexts a webhook may call the server with.
var contexts = []struct {
	name string
	of   func(r *http.Request) context.Context
}{
	{"request context", func(r *http.Request) context.Context { return r.Context() }},
	{"background context", func(*http.Request) context.Context { return context.Background() }},
}

// clientsetOf is a typed clientset over s's HTTP handler, named client.
func clientsetOf(t *testing.T, s *fakeapi.Server, client string) (*kubernetes.Clientset, *fakehttp.Pipe) {
	t.Helper()
	pipe := fakehttp.NewPipe(fakehttp.NewHandler(s, fakehttp.Options{}))
	cs, err := kubernetes.NewForConfig(pipe.RESTConfig(client))
	if err != nil {
		t.Fatal(err)
	}
	return cs, pipe
}

func deny(format string, args ...any) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{Message: fmt.Sprintf(format, args...)}}
}

var allow = &admissionv1.AdmissionResponse{Allowed: true}

// TestAValidatingWebhookThatReadsTheServerSeesTheStateBeforeTheWrite: a
// validating webhook GETs the ConfigMap its object names (data.ref) and
// LISTs the namespace's ConfigMaps through a typed clientset, with the
// request's context or another: it is answered at once with the state
// before the write (the created object is not listed yet, an update's
// Get returns the stored version), the list's resourceVersion is the
// latest before the write, and the write lands. A missing ref is the
// webhook's own denial.
func TestAValidatingWebhookThatReadsTheServerSeesTheStateBeforeTheWrite(t *testing.T) {
	for _, cx := range contexts {
		t.Run(cx.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, log := newServer(t, fakeapi.Options{})
				alice := s.Client("alice")
				mustCreateCM(t, alice, "ns", "limits", map[string]string{"max": "2"})
				mustCreateCM(t, alice, "ns", "a", map[string]string{"v": "1"})
				cs, api := clientsetOf(t, s, "webhook")
				defer api.Close()
				var listRV string
				var listed []string
				var storedV string
				h := &readingWebhook{ctxOf: cx.of, answer: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
					var cm corev1.ConfigMap
					if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
						return deny("decode: %v", err)
					}
					ref := cm.Data["ref"]
					if ref == "" {
						return allow
					}
					if _, err := cs.CoreV1().ConfigMaps(req.Namespace).Get(ctx, ref, metav1.GetOptions{}); apierrors.IsNotFound(err) {
						return deny("ref %s does not exist", ref)
					} else if err != nil {
						return deny("reading ref %s: %v", ref, err)
					}
					list, err := cs.CoreV1().ConfigMaps(req.Namespace).List(ctx, metav1.ListOptions{})
					if err != nil {
						return deny("listing: %v", err)
					}
					listRV, listed = list.ResourceVersion, nil
					for _, it := range list.Items {
						listed = append(listed, it.Name)
					}
					if req.Operation == admissionv1.Update {
						cur, err := cs.CoreV1().ConfigMaps(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
						if err != nil {
							return deny("reading %s: %v", req.Name, err)
						}
						storedV = cur.Data["v"]
					}
					return allow
				}}
				pipe := fakehttp.NewPipe(h)
				defer pipe.Close()
				if err := s.SetWebhooks(fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{validatingConfig("refs.example.com", "/validate", configmaps)}, Transport: pipe}); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				before := s.ResourceVersion()
				if _, err := alice.Create(context.Background(), cmGVR, "ns", configMap("ns", "b", map[string]string{"ref": "limits"}), metav1.CreateOptions{}); err != nil {
					t.Fatalf("create b (its ref exists): %v", err)
				}
				if want := strconv.FormatInt(before, 10); listRV != want || !slices.Equal(listed, []string{"a", "limits"}) {
					t.Errorf("the webhook listed %v at resourceVersion %s, want [a limits] at %s (the state before the create)", listed, listRV, want)
				}
				// The webhook's list is observed before the write it admits.
				var order []string
				for _, o := range log.All() {
					if (o.Kind == fakeapi.ObsList && o.Request.Client == "webhook") || (o.Kind == fakeapi.ObsWrite && o.Name == "b") {
						order = append(order, fmt.Sprintf("%s@%d", o.Kind, o.RV))
					}
				}
				if want := []string{fmt.Sprintf("list@%d", before), fmt.Sprintf("write@%d", before+1)}; !slices.Equal(order, want) {
					t.Errorf("observations %v, want %v", order, want)
				}
				_, err := alice.Create(context.Background(), cmGVR, "ns", configMap("ns", "c", map[string]string{"ref": "missing"}), metav1.CreateOptions{})
				if err == nil || !strings.Contains(err.Error(), `admission webhook "refs.example.com" denied the request: ref missing does not exist`) {
					t.Errorf("create c (its ref is missing): %v, want the webhook's denial", err)
				}
				upd := configMap("ns", "a", map[string]string{"v": "2", "ref": "limits"})
				out, err := alice.Update(context.Background(), cmGVR, "ns", upd, metav1.UpdateOptions{})
				if err != nil {
					t.Fatalf("update a: %v", err)
				}
				if storedV != "1" || out.(*corev1.ConfigMap).Data["v"] != "2" {
					t.Errorf("the webhook read a's v=%q during its update (want 1, the stored one); stored after: %v", storedV, out.(*corev1.ConfigMap).Data)
				}
				if took := time.Since(start); took != 0 {
					t.Errorf("the writes took %v (virtual), want no wait", took)
				}
			})
		})
	}
}

// TestAMutatingWebhookThatReadsTheServerCopiesWhatIsStored: a mutating
// webhook GETs the ConfigMap "defaults" and patches its value into the
// object; a GET of the object being created answers 404 (it is not
// stored yet). The create lands with the copied value.
func TestAMutatingWebhookThatReadsTheServerCopiesWhatIsStored(t *testing.T) {
	for _, cx := range contexts {
		t.Run(cx.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := fakeapi.NewServer(fakeapi.Options{})
				alice := s.Client("alice")
				mustCreateCM(t, alice, "ns", "defaults", map[string]string{"size": "7"})
				cs, api := clientsetOf(t, s, "webhook")
				defer api.Close()
				var selfErr error
				h := &readingWebhook{ctxOf: cx.of, answer: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
					if req.Name == "defaults" {
						return allow
					}
					_, selfErr = cs.CoreV1().ConfigMaps(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
					d, err := cs.CoreV1().ConfigMaps(req.Namespace).Get(ctx, "defaults", metav1.GetOptions{})
					if err != nil {
						return deny("reading defaults: %v", err)
					}
					patch := fmt.Sprintf(`[{"op":"add","path":"/data","value":{"size":%q}}]`, d.Data["size"])
					return &admissionv1.AdmissionResponse{Allowed: true, PatchType: &jsonPatchTy, Patch: []byte(patch)}
				}}
				pipe := fakehttp.NewPipe(h)
				defer pipe.Close()
				onCreate := slices.Clone(configmaps) // configmaps is shared: change a copy
				onCreate[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
				cfg := mutatingConfig("defaults.example.com", "/mutate", onCreate)
				if err := s.SetWebhooks(fakeapi.Webhooks{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{cfg}, Transport: pipe}); err != nil {
					t.Fatal(err)
				}
				out, err := alice.Create(context.Background(), cmGVR, "ns", configMap("ns", "w", nil), metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				if got := out.(*corev1.ConfigMap).Data["size"]; got != "7" {
					t.Errorf("created with size %q, want 7 (copied from defaults)", got)
				}
				if !apierrors.IsNotFound(selfErr) {
					t.Errorf("the webhook's GET of the object being created: %v, want 404", selfErr)
				}
			})
		})
	}
}

// TestAWatchFromAListAWebhookGotDeliversTheAdmittedWrite: a watch opened
// during the call at the resourceVersion of the webhook's list delivers
// the write being admitted once it lands: what the list did not show,
// the watch shows.
func TestAWatchFromAListAWebhookGotDeliversTheAdmittedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fakeapi.NewServer(fakeapi.Options{})
		alice, webhook := s.Client("alice"), s.Client("webhook")
		mustCreateCM(t, alice, "ns", "a", nil)
		var w watch.Interface
		var listRV string
		h := &readingWebhook{ctxOf: func(r *http.Request) context.Context { return r.Context() }, answer: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			list, err := webhook.List(ctx, cmGVR, "ns", metav1.ListOptions{})
			if err != nil {
				return deny("list: %v", err)
			}
			listRV = list.(*corev1.ConfigMapList).ResourceVersion
			if w, err = webhook.Watch(context.Background(), cmGVR, "ns", metav1.ListOptions{ResourceVersion: listRV}); err != nil {
				return deny("watch: %v", err)
			}
			return allow
		}}
		pipe := fakehttp.NewPipe(h)
		defer pipe.Close()
		if err := s.SetWebhooks(fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{validatingConfig("w.example.com", "/validate", configmaps)}, Transport: pipe}); err != nil {
			t.Fatal(err)
		}
		created, err := alice.Create(context.Background(), cmGVR, "ns", configMap("ns", "b", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		defer w.Stop()
		ev := <-w.ResultChan()
		cm, _ := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || cm == nil || cm.Name != "b" || cm.ResourceVersion != created.(*corev1.ConfigMap).ResourceVersion {
			t.Errorf("the watch from the webhook's list (rv %s) delivered %s %v, want ADDED b at %s", listRV, ev.Type, ev.Object, created.(*corev1.ConfigMap).ResourceVersion)
		}
	})
}

// TestAWebhooksWriteIsRefusedAtOnceOrHeldUntilItsTimeout: the lab serves
// one write at a time, so a webhook's own write is not served during the
// call (kube-apiserver would serve it). Made with the request's context,
// it fails at once with 500 and a message that says so; made with
// another context, it waits for the write being admitted, the call ends
// at the webhook's timeoutSeconds, and the webhook's write is served
// after.
func TestAWebhooksWriteIsRefusedAtOnceOrHeldUntilItsTimeout(t *testing.T) {
	for _, cx := range contexts {
		t.Run(cx.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := fakeapi.NewServer(fakeapi.Options{})
				cs, api := clientsetOf(t, s, "webhook")
				defer api.Close()
				wrote := make(chan error, 1)
				h := &readingWebhook{ctxOf: cx.of, answer: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
					if req.Name != "x" {
						return allow
					}
					_, err := cs.CoreV1().ConfigMaps("ns").Create(ctx, configMap("ns", "side", nil), metav1.CreateOptions{})
					wrote <- err
					return allow
				}}
				pipe := fakehttp.NewPipe(h)
				defer pipe.Close()
				cfg := validatingConfig("writes.example.com", "/validate", configmaps)
				cfg.Webhooks[0].TimeoutSeconds = ptr.To[int32](2)
				if err := s.SetWebhooks(fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{cfg}, Transport: pipe}); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				_, err := s.Client("alice").Create(context.Background(), cmGVR, "ns", configMap("ns", "x", nil), metav1.CreateOptions{})
				took := time.Since(start)
				if cx.name == "request context" {
					werr := <-wrote
					if !apierrors.IsInternalError(werr) || !strings.Contains(werr.Error(), "a webhook's write is not served while the write it admits waits") {
						t.Errorf("the webhook's write: %v, want 500 saying why", werr)
					}
					if err != nil || took != 0 {
						t.Errorf("the admitted create: %v after %v, want it stored at once", err, took)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), `failed calling webhook "writes.example.com"`) || took != 2*time.Second {
					t.Errorf("the admitted create: %v after %v, want the call failed at the 2s timeout", err, took)
				}
				if werr := <-wrote; werr != nil {
					t.Errorf("the webhook's write, served after the call: %v", werr)
				}
			})
		})
	}
}

// TestAWebhookReadingDuringADeleteCollectionIsToldWhy: a delete
// collection commits its objects one by one and publishes them when it
// ends; while a later object's delete is admitted, the earlier ones are
// stored but not yet sent to any watch, so the lab does not serve reads
// then (kube-apiserver would, with the earlier deletes seen): a webhook's
// read with the request's context fails at once, saying so.
func TestAWebhookReadingDuringADeleteCollectionIsToldWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fakeapi.NewServer(fakeapi.Options{})
		alice, webhook := s.Client("alice"), s.Client("webhook")
		mustCreateCM(t, alice, "ns", "a", nil)
		mustCreateCM(t, alice, "ns", "b", nil)
		var errs []error
		h := &readingWebhook{ctxOf: func(r *http.Request) context.Context { return r.Context() }, answer: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
			_, err := webhook.List(ctx, cmGVR, "ns", metav1.ListOptions{})
			errs = append(errs, err)
			return allow
		}}
		pipe := fakehttp.NewPipe(h)
		defer pipe.Close()
		cfg := validatingConfig("deletes.example.com", "/validate", configmaps)
		if err := s.SetWebhooks(fakeapi.Webhooks{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{cfg}, Transport: pipe}); err != nil {
			t.Fatal(err)
		}
		if err := alice.DeleteCollection(context.Background(), cmGVR, "ns", metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(errs) != 2 || errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "after the collection's earlier deletes") {
			t.Errorf("the webhook's lists: %v, want the first served and the second refused saying why", errs)
		}
	})
}
