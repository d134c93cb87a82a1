package fakeapi_test

import (
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestWriteObservationsArriveInResourceVersionOrderWithTheObjectJSON: writes
// from concurrent clients are observed in strictly increasing revision order,
// each with the stored object as JSON (apiVersion and kind included).
func TestWriteObservationsArriveInResourceVersionOrderWithTheObjectJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		admin := s.Client("admin")
		mustNamespace(t, admin, "a")
		var wg sync.WaitGroup
		for w := range 4 {
			c := s.Client("writer-" + strconv.Itoa(w))
			wg.Go(func() {
				for i := range 25 {
					mustCreateCM(t, c, "a", c.Name()+"-"+strconv.Itoa(i), nil)
				}
			})
		}
		wg.Wait()
		writes := log.Kind(fakeapi.ObsWrite)
		if len(writes) != 101 {
			t.Fatalf("write observations = %d, want 101 (namespace + 100 configmaps)", len(writes))
		}
		decoder := scheme.Codecs.UniversalDeserializer()
		for i, o := range writes {
			if i > 0 && o.RV <= writes[i-1].RV {
				t.Fatalf("write %d at rv %d observed after rv %d", i, o.RV, writes[i-1].RV)
			}
			obj, gvk, err := decoder.Decode(o.Object, nil, nil)
			if err != nil {
				t.Fatalf("write %d: JSON %s does not decode: %v", i, o.Object, err)
			}
			m := obj.(metav1.Object)
			if m.GetName() != o.Name || m.GetResourceVersion() != strconv.FormatInt(o.RV, 10) || string(m.GetUID()) != string(o.UID) {
				t.Errorf("write %d: JSON has %s %s rv %s, observation says %s rv %d", i, gvk.Kind, m.GetName(), m.GetResourceVersion(), o.Name, o.RV)
			}
			if o.Request == nil || o.Verb != "create" {
				t.Errorf("write %d: request %v verb %q, want the create request", i, o.Request, o.Verb)
			}
		}
	})
}

// TestGarbageCollectedDeletesAreObservedAndWatched: deleting an owner
// deletes its dependent in the same call; the dependent's delete is observed
// as a write by the garbage collector (no request) and reaches watchers.
func TestGarbageCollectedDeletesAreObservedAndWatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, log := newServer(t, fakeapi.Options{})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		owner := mustCreateCM(t, c, "a", "owner", nil)
		dep := configMap("a", "dependent", nil)
		dep.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}
		if _, err := c.Create(t.Context(), cmGVR, "a", dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		w, err := c.Watch(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: itoa(s.ResourceVersion())})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(t.Context(), cmGVR, "a", "owner", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		var deleted []string
		for range 2 {
			ev := <-w.ResultChan()
			if ev.Type == watch.Deleted {
				deleted = append(deleted, ev.Object.(*corev1.ConfigMap).Name)
			}
		}
		w.Stop()
		if len(deleted) != 2 {
			t.Errorf("watch saw deletes of %v, want owner and dependent", deleted)
		}
		gc := log.Where(func(o fakeapi.Observation) bool { return o.Kind == fakeapi.ObsWrite && o.ByGC })
		if len(gc) != 1 || gc[0].Name != "dependent" || gc[0].Request != nil {
			t.Errorf("GC writes = %+v, want the dependent's delete with no request", gc)
		}
	})
}

// TestReplicaLagServesAStaleListAtResourceVersionZero: a hook's ReplicaLag
// serves resourceVersion="0" lists from a replica behind the latest (and is
// observed as a fault and a lagging list); consistent lists ignore it.
func TestReplicaLagServesAStaleListAtResourceVersionZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hooks := fakeapi.HookFuncs{Before: func(req fakeapi.RequestInfo) fakeapi.RequestFault {
			if req.Verb == "list" {
				return fakeapi.RequestFault{ReplicaLag: 2, Name: "stale-replica"}
			}
			return fakeapi.RequestFault{}
		}}
		s, log := newServer(t, fakeapi.Options{Hooks: hooks})
		c := s.Client("test")
		mustNamespace(t, c, "a")
		mustCreateCM(t, c, "a", "one", nil)
		mustCreateCM(t, c, "a", "two", nil)
		mustCreateCM(t, c, "a", "three", nil)
		latest := s.ResourceVersion()

		stale, err := c.List(t.Context(), cmGVR, "a", metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		if l := stale.(*corev1.ConfigMapList); l.ResourceVersion != itoa(latest-2) || len(l.Items) != 1 {
			t.Errorf("list at rv 0 = rv %s with %d items, want rv %d with only 'one'", l.ResourceVersion, len(l.Items), latest-2)
		}
		fresh, err := c.List(t.Context(), cmGVR, "a", metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l := fresh.(*corev1.ConfigMapList); l.ResourceVersion != itoa(latest) || len(l.Items) != 3 {
			t.Errorf("consistent list = rv %s with %d items, want rv %d with 3", l.ResourceVersion, len(l.Items), latest)
		}
		lists := log.Kind(fakeapi.ObsList)
		faults := log.Kind(fakeapi.ObsFault)
		if len(lists) != 2 || lists[0].Lag != 2 || lists[1].Lag != 0 || len(faults) != 1 || faults[0].Fault != "stale-replica" {
			t.Errorf("lists %+v, faults %+v; want lags 2 then 0 and one stale-replica fault", lists, faults)
		}
	})
}
