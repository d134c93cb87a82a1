package bellerophon

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/fakeapitest"
	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

// testRecorder is a sim.Recorder that keeps the records in memory.
type testRecorder struct {
	start time.Time
	mu    sync.Mutex
	recs  []sim.Record
}

func newTestRecorder() *testRecorder { return &testRecorder{start: time.Now()} }

func (r *testRecorder) Record(rec sim.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.Pos = len(r.recs)
	rec.At = sim.Duration(time.Since(r.start))
	r.recs = append(r.recs, rec)
}

func (r *testRecorder) Now() time.Duration { return time.Since(r.start) }

// where returns the records keep accepts.
func (r *testRecorder) where(keep func(sim.Record) bool) []sim.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sim.Record
	for _, rec := range r.recs {
		if keep(rec) {
			out = append(out, rec)
		}
	}
	return out
}

// harness is a fake API server serving Bellerophons, a user client and a
// Controller whose informers run (but whose workers do not: tests call
// syncHandler themselves, as sample-controller's tests do).
type harness struct {
	t      *testing.T
	ctx    context.Context
	server *fakeapi.Server
	log    *fakeapitest.Log
	user   *fakeapi.Client
	rec    *testRecorder
	c      *Controller
	stop   func()
}

type harnessOptions struct {
	bug Bug
	// noValidation serves the CRD without its schema check.
	noValidation bool
	// delay holds watch events of the controller's watches of a resource.
	delay map[string]time.Duration
	// before, optional, injects request faults.
	before func(fakeapi.RequestInfo) fakeapi.RequestFault
	// objects are created by the user before the controller starts.
	objects []*v1alpha1.Bellerophon
}

// newHarness must run inside a synctest bubble.
func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	log := &fakeapitest.Log{}
	server := fakeapi.NewServer(fakeapi.Options{
		Observer: log,
		Hooks: fakeapi.HookFuncs{
			Before: o.before,
			Delay: func(w fakeapi.WatcherInfo, ev fakeapi.EventInfo) time.Duration {
				if w.Client != "bellerophon" || ev.InitialEvent {
					return 0
				}
				return o.delay[w.Resource.Resource]
			},
		},
	})
	info := fakeapi.ResourceInfo{GVR: v1alpha1.Resource, Kind: v1alpha1.Kind, ListKind: v1alpha1.ListKind, Namespaced: true, HasStatus: true}
	if !o.noValidation {
		info.Validate = func(u *unstructured.Unstructured) field.ErrorList { return v1alpha1.ValidateObject(u.Object) }
	}
	if err := server.RegisterCRD(info); err != nil {
		t.Fatalf("RegisterCRD: %v", err)
	}
	h := &harness{t: t, server: server, log: log, user: server.Client("user"), rec: newTestRecorder()}
	for _, b := range o.objects {
		h.create(b)
	}
	ctx, cancel := context.WithCancel(t.Context())
	h.ctx = ctx
	client := server.Client("bellerophon")
	env := sim.Env{
		Name: "bellerophon", Kube: client.Clientset(), Dynamic: client.Dynamic(), Rec: h.rec,
		ListerWatcher: func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
			return client.ListerWatcher(gvr, ns)
		},
	}
	c, err := NewController(ctx, env, Options{Bug: o.bug, Backups: NewBackupStore()})
	if err != nil {
		t.Fatalf("NewController: %v", err)
	}
	h.c = c
	var wg sync.WaitGroup
	c.startInformers(ctx, &wg)
	if !cache.WaitFor(ctx, "", c.registrations[ResourceBellerophons].HasSyncedChecker(),
		c.registrations[ResourcePods].HasSyncedChecker(), c.registrations[ResourceConfigMaps].HasSyncedChecker()) {
		t.Fatalf("handlers never synced")
	}
	h.stop = func() {
		cancel()
		c.workqueue.ShutDown()
		wg.Wait()
	}
	t.Cleanup(h.stop)
	return h
}

func bellerophon(name string, replicas int32, version string, config map[string]string) *v1alpha1.Bellerophon {
	return &v1alpha1.Bellerophon{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1alpha1.BellerophonSpec{Replicas: replicas, Version: version, Config: config},
	}
}

// create creates b as the user.
func (h *harness) create(b *v1alpha1.Bellerophon) *v1alpha1.Bellerophon {
	h.t.Helper()
	u, err := toUnstructured(b)
	if err != nil {
		h.t.Fatal(err)
	}
	out, err := h.user.Create(context.Background(), v1alpha1.Resource, b.Namespace, u, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatalf("creating Bellerophon %s: %v", b.Name, err)
	}
	return h.decode(out.(*unstructured.Unstructured))
}

func (h *harness) decode(u *unstructured.Unstructured) *v1alpha1.Bellerophon {
	h.t.Helper()
	b, err := decodeBellerophon(u)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// get reads a Bellerophon from the server (nil if gone).
func (h *harness) get(name string) *v1alpha1.Bellerophon {
	h.t.Helper()
	out, err := h.user.Get(context.Background(), v1alpha1.Resource, "default", name, metav1.GetOptions{})
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return nil
		}
		h.t.Fatalf("get %s: %v", name, err)
	}
	return h.decode(out.(*unstructured.Unstructured))
}

// pods lists the server's Pods.
func (h *harness) pods() []corev1.Pod {
	h.t.Helper()
	out, err := h.user.List(context.Background(), podsGVR, "default", metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.(*corev1.PodList).Items
}

// configMap reads a ConfigMap from the server (nil if gone).
func (h *harness) configMap(name string) *corev1.ConfigMap {
	h.t.Helper()
	out, err := h.user.Get(context.Background(), configMapsGVR, "default", name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return out.(*corev1.ConfigMap)
}

// events lists the server's Events.
func (h *harness) events() []corev1.Event {
	h.t.Helper()
	out, err := h.user.List(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "events"}, "default", metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return out.(*corev1.EventList).Items
}

// sync runs one reconcile of name.
func (h *harness) sync(name string) error {
	return h.c.syncHandler(h.ctx, cache.NewObjectName("default", name))
}

// markReady sets the Ready condition of every Pod, as the sim's kubelet does.
func (h *harness) markReady() {
	h.t.Helper()
	for _, p := range h.pods() {
		if podReady(&p) {
			continue
		}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		if _, err := h.user.UpdateStatus(context.Background(), podsGVR, p.Namespace, &p, metav1.UpdateOptions{}); err != nil {
			h.t.Fatalf("marking %s ready: %v", p.Name, err)
		}
	}
}

// requests returns the answers to the controller's requests of verb on
// resource.
func (h *harness) requests(verb, resource string) []fakeapi.Observation {
	return h.log.Where(func(o fakeapi.Observation) bool {
		return o.Kind == fakeapi.ObsRequest && o.Request != nil && o.Request.Client == "bellerophon" &&
			o.Request.Verb == verb && o.Request.Resource.Resource == resource
	})
}

// serverObjects is the server's state as sim.ServerObjects, for Desired.
func (h *harness) serverObjects() []sim.ServerObject {
	h.t.Helper()
	var out []sim.ServerObject
	for _, gvr := range []schema.GroupVersionResource{v1alpha1.Resource, podsGVR, configMapsGVR} {
		list, err := h.user.List(context.Background(), gvr, "", metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		var items []any
		switch l := list.(type) {
		case *unstructured.UnstructuredList:
			for i := range l.Items {
				items = append(items, &l.Items[i])
			}
		case *corev1.PodList:
			for i := range l.Items {
				items = append(items, &l.Items[i])
			}
		case *corev1.ConfigMapList:
			for i := range l.Items {
				items = append(items, &l.Items[i])
			}
		}
		for _, it := range items {
			raw, err := json.Marshal(it)
			if err != nil {
				h.t.Fatal(err)
			}
			out = append(out, sim.ServerObject{Resource: gvr, Object: raw})
		}
	}
	return out
}

// newTestQueue returns a plain rate-limited queue shut down at the end of
// the test.
func newTestQueue(t *testing.T) workqueue.TypedRateLimitingInterface[cache.ObjectName] {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName]())
	t.Cleanup(q.ShutDown)
	return q
}
