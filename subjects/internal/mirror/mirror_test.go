package mirror

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/cachelab/cachelab/sim"
)

func cm(name, uid string, data map[string]string, owner string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), ResourceVersion: "5"},
		Data:       data,
	}
	if owner != "" {
		t := true
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: strings.TrimSuffix(name, Suffix), UID: types.UID(owner), Controller: &t}}
	}
	return c
}

func server(t *testing.T, cms ...*corev1.ConfigMap) []sim.ServerObject {
	t.Helper()
	var out []sim.ServerObject
	for _, c := range cms {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sim.ServerObject{Resource: GVR, Object: b})
	}
	return out
}

func TestDesiredNamesTheFirstSourceOutOfLine(t *testing.T) {
	d := map[string]string{"k": "v"}
	for _, tc := range []struct {
		name string
		objs []*corev1.ConfigMap
		why  string // "" = desired
	}{
		{"empty", nil, ""},
		{"mirrored", []*corev1.ConfigMap{cm("a", "u1", d, ""), cm("a-mirror", "m1", d, "u1")}, ""},
		{"nil and empty data are equal", []*corev1.ConfigMap{cm("a", "u1", nil, ""), cm("a-mirror", "m1", map[string]string{}, "u1")}, ""},
		{"missing mirror", []*corev1.ConfigMap{cm("a", "u1", d, "")}, "source ns/a has no mirror"},
		{"stale data", []*corev1.ConfigMap{cm("a", "u1", d, ""), cm("a-mirror", "m1", nil, "u1")}, "mirror ns/a-mirror data differs"},
		{"owned by an old incarnation", []*corev1.ConfigMap{cm("a", "u2", d, ""), cm("a-mirror", "m1", d, "u1")}, "ns/a-mirror is not controlled by source uid u2"},
		{"orphan mirror", []*corev1.ConfigMap{cm("b-mirror", "m1", d, "gone")}, "mirror ns/b-mirror is controlled by ConfigMap uid gone"},
		{"unowned user mirror is ignored", []*corev1.ConfigMap{cm("c-mirror", "m1", d, "")}, ""},
	} {
		ok, why := Desired(server(t, tc.objs...))
		if ok != (tc.why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%s: Desired = %v %q, want ok=%v and a reason containing %q", tc.name, ok, why, tc.why == "", tc.why)
		}
	}
	if ok, why := Desired([]sim.ServerObject{{Resource: GVR, Object: []byte("{")}}); ok || !strings.Contains(why, "is not a ConfigMap") {
		t.Errorf("bad JSON: Desired = %v %q, want a clear reason", ok, why)
	}
}

// getter serves a fixed cache.
func getter(cms ...*corev1.ConfigMap) Getter {
	return func(ns, name string) (*corev1.ConfigMap, bool, error) {
		for _, c := range cms {
			if c.Namespace == ns && c.Name == name {
				return c, true, nil
			}
		}
		return nil, false, nil
	}
}

func writes(kube *fake.Clientset) []string {
	var out []string
	for _, a := range kube.Actions() {
		if a.GetVerb() == "list" || a.GetVerb() == "watch" || a.GetVerb() == "get" {
			continue
		}
		out = append(out, a.GetVerb())
	}
	return out
}

func TestReconcileWritesOnlyWhatTheCacheSaysIsMissing(t *testing.T) {
	d := map[string]string{"k": "v"}
	for _, tc := range []struct {
		name   string
		cache  []*corev1.ConfigMap
		key    string
		did    string
		writes string
	}{
		{"create", []*corev1.ConfigMap{cm("a", "u1", d, "")}, "ns/a", "created", "create"},
		{"in sync", []*corev1.ConfigMap{cm("a", "u1", d, ""), cm("a-mirror", "m1", d, "u1")}, "ns/a", "in sync", ""},
		{"update data", []*corev1.ConfigMap{cm("a", "u1", d, ""), cm("a-mirror", "m1", nil, "u1")}, "ns/a", "updated", "update"},
		{"adopt after recreate", []*corev1.ConfigMap{cm("a", "u2", d, ""), cm("a-mirror", "m1", d, "u1")}, "ns/a", "adopted", "update"},
		{"orphan", []*corev1.ConfigMap{cm("a-mirror", "m1", d, "u1")}, "ns/a", "deleted orphan mirror", "delete"},
		{"nothing", nil, "ns/a", "source absent", ""},
	} {
		var objs []runtime.Object
		for _, c := range tc.cache {
			objs = append(objs, c)
		}
		kube := fake.NewClientset(objs...)
		r := &Reconciler{Client: kube, Get: getter(tc.cache...)}
		did, err := r.Reconcile(context.Background(), tc.key)
		if err != nil || did != tc.did || strings.Join(writes(kube), ",") != tc.writes {
			t.Errorf("%s: Reconcile = %q, %v with writes %v; want %q with writes [%s]", tc.name, did, err, writes(kube), tc.did, tc.writes)
		}
	}
}

func TestReconcileReturnsTheServersConflictForAStaleCache(t *testing.T) {
	kube := fake.NewClientset()
	kube.PrependReactor("update", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(GVR.GroupResource(), "a-mirror", nil)
	})
	r := &Reconciler{Client: kube, Get: getter(cm("a", "u1", map[string]string{"k": "v"}, ""), cm("a-mirror", "m1", nil, "u1"))}
	if _, err := r.Reconcile(context.Background(), "ns/a"); !apierrors.IsConflict(err) {
		t.Errorf("err = %v, want the 409 Conflict", err)
	}
}

func TestReconcileRejectsKeysItCannotUse(t *testing.T) {
	r := &Reconciler{Client: fake.NewClientset(), Get: getter()}
	for key, want := range map[string]string{"a/b/c": "bad key", "ns/a-mirror": "names a mirror"} {
		if _, err := r.Reconcile(context.Background(), key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("key %q: err %v, want one containing %q", key, err, want)
		}
	}
}

func TestSourceKeyMapsAMirrorToItsSource(t *testing.T) {
	for in, want := range map[[2]string]string{{"ns", "a"}: "ns/a", {"ns", "a-mirror"}: "ns/a", {"", "x-mirror"}: "x"} {
		if got := SourceKey(in[0], in[1]); got != want {
			t.Errorf("SourceKey(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}
