package sim

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestMirrorDropsAnObjectWhoseLastFinalizerRemovalDeletedIt: kube-apiserver
// (and fakeapi) report the update that empties a terminating object's
// finalizers as a DELETED event whose object still lists them. The
// recorder's mirror of the server, which Converger subjects are judged on,
// must drop the object then, not keep it terminating forever.
func TestMirrorDropsAnObjectWhoseLastFinalizerRemovalDeletedIt(t *testing.T) {
	r := newRecorder(time.Now(), NewPolicy(&Plan{Version: PlanVersion}, func() time.Duration { return 0 }), 0)
	gvr := schema.GroupVersionResource{Group: "lab.cachelab.dev", Version: "v1alpha1", Resource: "bellerophons"}
	write := func(verb string, typ watch.EventType, obj string, rv int64) {
		info := fakeapi.EventInfo{Type: typ, Resource: gvr, Namespace: "default", Name: "web", UID: "u1", RV: rv}
		r.Observe(fakeapi.Observation{Kind: fakeapi.ObsWrite, Verb: verb, Resource: gvr, Namespace: "default",
			Name: "web", UID: "u1", RV: rv, Object: []byte(obj), Event: &info})
	}
	write("create", watch.Added, `{"metadata":{"name":"web","namespace":"default","uid":"u1","finalizers":["lab.cachelab.dev/backup"]}}`, 1)
	write("delete", watch.Modified, `{"metadata":{"name":"web","namespace":"default","uid":"u1","finalizers":["lab.cachelab.dev/backup"],"deletionTimestamp":"2000-01-01T00:00:01Z"}}`, 2)
	if len(r.objs) != 1 {
		t.Fatalf("after the delete that only marks it terminating the mirror holds %d objects, want 1", len(r.objs))
	}
	write("update", watch.Deleted, `{"metadata":{"name":"web","namespace":"default","uid":"u1","finalizers":["lab.cachelab.dev/backup"],"deletionTimestamp":"2000-01-01T00:00:01Z"}}`, 3)
	if len(r.objs) != 0 {
		t.Fatalf("after the DELETED event of the finalizer removal the mirror still holds %d object(s): %s", len(r.objs), r.objs[0].Object)
	}
	recs := r.close()
	if got := recs[len(recs)-1]; got.Kind != RecWrite || got.EventType != "DELETED" {
		t.Fatalf("last record %+v, want a write record carrying EventType DELETED", got)
	}
}
