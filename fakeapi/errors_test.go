package fakeapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestApplyThenTimeoutAppliesTheWrite: the client gets kube-apiserver's 504
// Timeout, but the write happened: it is stored, observed and watched.
func TestApplyThenTimeoutAppliesTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := fakeapi.HookFuncs{Before: func(req fakeapi.RequestInfo) fakeapi.RequestFault {
			if req.Verb == "create" && req.Name == "unknown-outcome" {
				return fakeapi.RequestFault{ApplyThenTimeout: true, Name: "timeout-after-apply"}
			}
			return fakeapi.RequestFault{}
		}}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		_, err := c.Create(t.Context(), cmGVR, "a", configMap("a", "unknown-outcome", nil), metav1.CreateOptions{})
		if !apierrors.IsTimeout(err) {
			t.Fatalf("create: err = %v, want 504 Timeout", err)
		}
		got, err := c.Get(t.Context(), cmGVR, "a", "unknown-outcome", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the timed-out create was not applied: %v", err)
		}
		if rv := got.(*corev1.ConfigMap).ResourceVersion; rv != itoa(s.ResourceVersion()) {
			t.Errorf("stored at rv %s, latest %d", rv, s.ResourceVersion())
		}
		writes := log.Where(func(o fakeapi.Observation) bool { return o.Kind == fakeapi.ObsWrite && o.Name == "unknown-outcome" })
		faults := log.Where(func(o fakeapi.Observation) bool {
			return o.Kind == fakeapi.ObsFault && o.Fault == "timeout-after-apply"
		})
		answers := log.Where(func(o fakeapi.Observation) bool {
			return o.Kind == fakeapi.ObsRequest && o.Request.Verb == "create" && o.Name == "unknown-outcome"
		})
		if len(writes) != 1 || len(faults) != 1 || len(answers) != 1 || answers[0].Code != http.StatusGatewayTimeout {
			t.Errorf("writes %d, faults %d, answers %+v; want 1, 1 and one 504", len(writes), len(faults), answers)
		}
	})
}

// TestInjectedErrorFailsWithoutTouchingTheStore: a hook's error is returned
// as is and nothing is written.
func TestInjectedErrorFailsWithoutTouchingTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := fakeapi.HookFuncs{Before: func(req fakeapi.RequestInfo) fakeapi.RequestFault {
			if req.Verb == "create" && req.Resource == cmGVR {
				return fakeapi.RequestFault{Err: apierrors.NewTooManyRequests("slow down", 1), Name: "429"}
			}
			return fakeapi.RequestFault{}
		}}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		before := s.ResourceVersion()
		_, err := c.Create(t.Context(), cmGVR, "a", configMap("a", "x", nil), metav1.CreateOptions{})
		if !apierrors.IsTooManyRequests(err) {
			t.Fatalf("err = %v, want 429", err)
		}
		if after := s.ResourceVersion(); after != before {
			t.Errorf("resourceVersion moved from %d to %d on a failed request", before, after)
		}
		if _, err := c.Get(t.Context(), cmGVR, "a", "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after failed create: err = %v, want 404", err)
		}
		reqs := log.Requests("create")
		if last := reqs[len(reqs)-1]; last.Code != http.StatusTooManyRequests || last.Reason != metav1.StatusReasonTooManyRequests {
			t.Errorf("observed answer %d %s, want 429 TooManyRequests", last.Code, last.Reason)
		}
	})
}

// TestClientErrorsAreAPIErrorsWithTheirCodes: each error path reaches the
// client as an apierrors StatusError with kube-apiserver's code and reason,
// and is observed with them.
func TestClientErrorsAreAPIErrorsWithTheirCodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		ctx := t.Context()
		mustNamespace(t, c, "a")
		stale := mustCreateCM(t, c, "a", "x", nil)
		if _, err := c.Update(ctx, cmGVR, "a", configMap("a", "x", map[string]string{"k": "1"}), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		oldRV := stale.ResourceVersion
		if err := s.Compact(s.ResourceVersion()); err != nil {
			t.Fatal(err)
		}
		negative := int64(-1)

		cases := []struct {
			name   string
			call   func() error
			code   int32
			reason metav1.StatusReason
		}{
			{"get missing", func() error { _, err := c.Get(ctx, cmGVR, "a", "missing", metav1.GetOptions{}); return err }, 404, metav1.StatusReasonNotFound},
			{"create existing", func() error {
				_, err := c.Create(ctx, cmGVR, "a", configMap("a", "x", nil), metav1.CreateOptions{})
				return err
			}, 409, metav1.StatusReasonAlreadyExists},
			{"update stale", func() error {
				_, err := c.Update(ctx, cmGVR, "a", stale, metav1.UpdateOptions{})
				return err
			}, 409, metav1.StatusReasonConflict},
			{"delete missing", func() error { return c.Delete(ctx, cmGVR, "a", "missing", metav1.DeleteOptions{}) }, 404, metav1.StatusReasonNotFound},
			{"watch compacted", func() error {
				_, err := c.Watch(ctx, cmGVR, "a", metav1.ListOptions{ResourceVersion: oldRV})
				return err
			}, 410, metav1.StatusReasonExpired},
			{"watch negative timeout", func() error {
				_, err := c.Watch(ctx, cmGVR, "a", metav1.ListOptions{TimeoutSeconds: &negative})
				return err
			}, 400, metav1.StatusReasonBadRequest},
			{"create nil object", func() error { _, err := c.Create(ctx, cmGVR, "a", nil, metav1.CreateOptions{}); return err }, 400, metav1.StatusReasonBadRequest},
			{"unknown resource", func() error {
				_, err := c.List(ctx, schema.GroupVersionResource{Group: "nope.io", Version: "v1", Resource: "widgets"}, "a", metav1.ListOptions{})
				return err
			}, 404, metav1.StatusReasonNotFound},
		}
		for _, tc := range cases {
			log.Reset()
			err := tc.call()
			var status apierrors.APIStatus
			if !asAPIStatus(err, &status) {
				t.Errorf("%s: err = %v (%T), want an API status error", tc.name, err, err)
				continue
			}
			if st := status.Status(); st.Code != tc.code || st.Reason != tc.reason {
				t.Errorf("%s: got %d %s (%v), want %d %s", tc.name, st.Code, st.Reason, err, tc.code, tc.reason)
			}
			reqs := log.Requests("")
			if len(reqs) != 1 || int32(reqs[0].Code) != tc.code || reqs[0].Reason != tc.reason {
				t.Errorf("%s: observed answers %+v, want one %d %s", tc.name, reqs, tc.code, tc.reason)
			}
		}
	})
}

func asAPIStatus(err error, target *apierrors.APIStatus) bool {
	st, ok := err.(apierrors.APIStatus)
	if ok {
		*target = st
	}
	return ok
}

// TestCancelledContextSendsNoRequest: a request with an ended context fails
// with the context's error and never reaches the server.
func TestCancelledContextSendsNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Client("test").Create(ctx, nsGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if n := len(log.All()); n != 0 {
			t.Errorf("%d observations, want none", n)
		}
	})
}

// TestBadInputGetsTypedErrorsNotPanics: misuse of the client and the
// controls is answered with errors that say what was wrong.
func TestBadInputGetsTypedErrorsNotPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		ctx := t.Context()
		mustNamespace(t, c, "a")
		widgets := schema.GroupVersionResource{Group: "nope.io", Version: "v1", Resource: "widgets"}

		if _, err := c.Watch(ctx, widgets, "a", metav1.ListOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("watch of an unknown resource: err = %v, want 404", err)
		}
		if _, err := c.Create(ctx, podsGVR, "a", configMap("a", "x", nil), metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
			t.Errorf("a ConfigMap created as a pod: err = %v, want 400", err)
		}
		if _, err := c.Watch(ctx, cmGVR, "a", metav1.ListOptions{LabelSelector: "a in (("}); !apierrors.IsBadRequest(err) {
			t.Errorf("watch with a malformed selector: err = %v, want 400", err)
		}
		if err := s.CloseWatch(42, true); !errors.Is(err, fakeapi.ErrNoSuchWatch) {
			t.Errorf("CloseWatch of an unknown id: err = %v, want ErrNoSuchWatch", err)
		}
		if err := s.ExpireWatch(42); !errors.Is(err, fakeapi.ErrNoSuchWatch) {
			t.Errorf("ExpireWatch of an unknown id: err = %v, want ErrNoSuchWatch", err)
		}
		if err := s.Compact(s.ResourceVersion() + 10); err == nil {
			t.Errorf("Compact beyond the latest revision succeeded")
		}
		if err := s.RegisterCRD(fakeapi.ResourceInfo{GVR: cmGVR, Kind: "ConfigMap", ListKind: "ConfigMapList", Namespaced: true}); err == nil {
			t.Errorf("registering configmaps again as a CRD succeeded")
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nope.io/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}
		if err := c.ObjectTracker().Add(u); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "RegisterCRD") {
			t.Errorf("tracker Add of an unserved kind: err = %v, want 400 naming RegisterCRD", err)
		}
	})
}
