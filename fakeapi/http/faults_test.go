package http_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestTooManyRequestsWithRetryAfterIsRetriedByTheRESTClient: a hook answers
// the first two GETs 429 with Retry-After: 3; the handler sends the header,
// client-go's REST client waits 3s (virtual) and retries, and the third
// attempt succeeds: Get returns no error after 6s.
func TestTooManyRequestsWithRetryAfterIsRetriedByTheRESTClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var gets atomic.Int32
		e := newEnv(t, fakeapi.Options{Hooks: fakeapi.HookFuncs{Before: func(r fakeapi.RequestInfo) fakeapi.RequestFault {
			if r.Verb == "get" && r.Client == "flaky" && gets.Add(1) <= 2 {
				return fakeapi.RequestFault{Err: apierrors.NewTooManyRequests("slow down", 3), Name: "429"}
			}
			return fakeapi.RequestFault{}
		}}})
		setup := e.clientset(t, "setup")
		mustNamespace(t, setup, "a")
		mustCM(t, setup, "a", "one", nil)

		start := time.Now()
		got, err := e.clientset(t, "flaky").CoreV1().ConfigMaps("a").Get(context.Background(), "one", metav1.GetOptions{})
		if err != nil || got.Name != "one" {
			t.Fatalf("get through two 429s = %v, %v; want the configmap", got, err)
		}
		if n := gets.Load(); n != 3 {
			t.Errorf("server saw %d GETs, want 3 (two 429s, then success)", n)
		}
		if d := time.Since(start); d != 6*time.Second {
			t.Errorf("get took %v, want 6s (two Retry-After: 3 waits)", d)
		}
		faults := e.log.Where(func(o fakeapi.Observation) bool { return o.Kind == fakeapi.ObsFault && o.Fault == "429" })
		if len(faults) != 2 {
			t.Errorf("%d 429 faults observed, want 2", len(faults))
		}
	})
}

// TestApplyThenTimeoutReachesTheHTTPClientAsA504AfterTheWrite: a hook that
// applies a create and then times out gives the typed client a Timeout
// error while the object exists: a write with an unknown outcome.
func TestApplyThenTimeoutReachesTheHTTPClientAsA504AfterTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{Hooks: fakeapi.HookFuncs{Before: func(r fakeapi.RequestInfo) fakeapi.RequestFault {
			if r.Verb == "create" && r.Client == "victim" {
				return fakeapi.RequestFault{ApplyThenTimeout: true}
			}
			return fakeapi.RequestFault{}
		}}})
		setup := e.clientset(t, "setup")
		mustNamespace(t, setup, "a")
		victim := e.clientset(t, "victim")
		_, err := victim.CoreV1().ConfigMaps("a").Create(context.Background(), cm("a", "x", nil), metav1.CreateOptions{})
		if !apierrors.IsTimeout(err) {
			t.Fatalf("create: err = %v, want a Timeout (504)", err)
		}
		if _, err := setup.CoreV1().ConfigMaps("a").Get(context.Background(), "x", metav1.GetOptions{}); err != nil {
			t.Errorf("the timed-out create was not applied: %v", err)
		}
	})
}

// TestEventDelayHoldsWatchFramesOverHTTP: the server's EventDelay hook
// holds each frame of an HTTP watch: an event written at t arrives at
// t+delay, and a later one never overtakes it.
func TestEventDelayHoldsWatchFramesOverHTTP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{Hooks: fakeapi.HookFuncs{Delay: func(w fakeapi.WatcherInfo, ev fakeapi.EventInfo) time.Duration {
			if ev.Name == "slow" {
				return 10 * time.Second
			}
			return time.Second
		}}})
		cs := e.clientset(t, "watcher")
		mustNamespace(t, cs, "a")
		w, err := cs.CoreV1().ConfigMaps("a").Watch(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		start := time.Now()
		mustCM(t, cs, "a", "slow", nil)
		mustCM(t, cs, "a", "fast", nil)
		for _, want := range []struct {
			name string
			at   time.Duration
		}{{"slow", 10 * time.Second}, {"fast", 10 * time.Second}} {
			ev := next(t, w)
			if got := eventName(ev); got != "ADDED "+want.name {
				t.Fatalf("event %s, want ADDED %s (in order)", got, want.name)
			}
			if d := time.Since(start); d != want.at {
				t.Errorf("%s delivered after %v, want %v", want.name, d, want.at)
			}
		}
	})
}

// TestServiceUnavailableIsRetriedOnlyWithRetryAfter: a 503 without
// Retry-After reaches the typed client as ServiceUnavailable; with
// Retry-After: 1 client-go retries it and succeeds.
func TestServiceUnavailableIsRetriedOnlyWithRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fail atomic.Int32
		var retryAfter atomic.Int32
		e := newEnv(t, fakeapi.Options{Hooks: fakeapi.HookFuncs{Before: func(r fakeapi.RequestInfo) fakeapi.RequestFault {
			if r.Client == "flaky" && fail.Add(-1) >= 0 {
				err := apierrors.NewServiceUnavailable("overloaded")
				if s := retryAfter.Load(); s > 0 {
					err.ErrStatus.Details = &metav1.StatusDetails{RetryAfterSeconds: s}
				}
				return fakeapi.RequestFault{Err: err}
			}
			return fakeapi.RequestFault{}
		}}})
		setup := e.clientset(t, "setup")
		mustNamespace(t, setup, "a")
		mustCM(t, setup, "a", "one", nil)
		flaky := e.clientset(t, "flaky").CoreV1().ConfigMaps("a")

		fail.Store(1)
		if _, err := flaky.Get(context.Background(), "one", metav1.GetOptions{}); !apierrors.IsServiceUnavailable(err) {
			t.Errorf("503 without Retry-After: err = %v, want ServiceUnavailable", err)
		}
		fail.Store(1)
		retryAfter.Store(1)
		if _, err := flaky.Get(context.Background(), "one", metav1.GetOptions{}); err != nil {
			t.Errorf("503 with Retry-After: err = %v, want a retried success", err)
		}
	})
}
