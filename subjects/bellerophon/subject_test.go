package bellerophon

import (
	"encoding/json"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
)

func TestParamsAreReadAndBadValuesNamed(t *testing.T) {
	o, err := Options{}.WithParams(map[string]string{ParamWorkers: "3", ParamHandlerDelay: "50ms", ParamLoopTime: "1s", "kubeletSomething": "x"})
	if err != nil || o.Workers != 3 || o.HandlerDelay != 50*time.Millisecond || o.LoopTime != time.Second {
		t.Errorf("WithParams = %+v, %v; want 3 workers, 50ms, 1s and other keys ignored", o, err)
	}
	for params, want := range map[*map[string]string]string{
		{ParamWorkers: "0"}:         "workers=\"0\": want an integer >= 1",
		{ParamWorkers: "two"}:       "workers=\"two\"",
		{ParamHandlerDelay: "-1s"}:  "handlerDelay=\"-1s\": want a non-negative Go duration",
		{ParamLoopTime: "a minute"}: "loopTime=\"a minute\"",
	} {
		if _, err := (Options{}).WithParams(*params); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WithParams(%v) error = %v, want one containing %q", *params, err, want)
		}
	}
	if _, err := (Options{Bug: "no-such-bug"}).withDefaults(); err == nil || !strings.Contains(err.Error(), "no-expectations") {
		t.Errorf("an unknown bug gives %v, want an error listing the known ones", err)
	}
}

func TestEveryMutantIsRegistered(t *testing.T) {
	if _, ok := sim.LookupSubject(SubjectName); !ok {
		t.Fatalf("%s is not registered", SubjectName)
	}
	for _, b := range Bugs {
		info, ok := sim.LookupSubject(SubjectName + "/" + string(b.Bug))
		if !ok || !info.Mutant || info.Source == "" || len(info.CRDs) != 1 || info.CRDs[0].OpenAPIV3Schema == nil {
			t.Errorf("mutant %s: registered %v, info %+v; want a mutant with a source and the validated CRD", b.Bug, ok, info)
		}
	}
	if len(Bugs) < 10 {
		t.Errorf("%d mutants, want at least 10", len(Bugs))
	}
}

// world builds server objects for Desired.
type world struct{ objs []sim.ServerObject }

func (w *world) add(gvr schema.GroupVersionResource, obj any) {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	w.objs = append(w.objs, sim.ServerObject{Resource: gvr, Object: raw})
}

// converged returns a world where a (2 replicas, version 1, config k=v) has
// converged, and a.
func converged() (*world, *v1alpha1.Bellerophon) {
	b := &v1alpha1.Bellerophon{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", UID: "u1", Generation: 2, Finalizers: []string{FinalizerName}},
		Spec:       v1alpha1.BellerophonSpec{Replicas: 2, Version: "1", Config: map[string]string{"k": "v"}},
	}
	b.Status = v1alpha1.BellerophonStatus{ObservedGeneration: 2, ReadyReplicas: 2, Conditions: []metav1.Condition{
		{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue},
		{Type: v1alpha1.ConditionDegraded, Status: metav1.ConditionFalse},
	}}
	w := &world{}
	w.add(v1alpha1.Resource, b)
	for _, name := range []string{"a-1", "a-2"} {
		p := newPod(b)
		p.Name = name
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		w.add(podsGVR, p)
	}
	w.add(configMapsGVR, newConfigMap(b))
	return w, b
}

func TestDesiredHoldsForAConvergedWorldAndNamesWhatIsWrong(t *testing.T) {
	w, _ := converged()
	if ok, why := Desired(w.objs); !ok {
		t.Fatalf("Desired(converged world) = false: %s", why)
	}
	for name, tc := range map[string]struct {
		change func(w *world, b *v1alpha1.Bellerophon)
		want   string
	}{
		"a Pod too many": {func(w *world, b *v1alpha1.Bellerophon) {
			p := newPod(b)
			p.Name = "a-3"
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			w.add(podsGVR, p)
		}, "has 3 Pods, want 2"},
		"a Pod of a deleted owner": {func(w *world, b *v1alpha1.Bellerophon) {
			gone := b.DeepCopy()
			gone.UID = "u0"
			p := newPod(gone)
			p.Name = "old"
			w.add(podsGVR, p)
		}, "belongs to a deleted Bellerophon"},
		"terminating with the finalizer": {func(w *world, b *v1alpha1.Bellerophon) {
			t := b.DeepCopy()
			now := metav1.Now()
			t.Name, t.UID, t.DeletionTimestamp = "z", "u9", &now
			w.add(v1alpha1.Resource, t)
		}, "terminating and still carries"},
	} {
		w, b := converged()
		tc.change(w, b)
		if ok, why := Desired(w.objs); ok || !strings.Contains(why, tc.want) {
			t.Errorf("%s: Desired = %v (%s), want false naming %q", name, ok, why, tc.want)
		}
	}
	for name, tc := range map[string]struct {
		mutate func(b *v1alpha1.Bellerophon)
		want   string
	}{
		"stale observedGeneration": {func(b *v1alpha1.Bellerophon) { b.Status.ObservedGeneration = 1 }, "observedGeneration = 1, want 2"},
		"readyReplicas wrong":      {func(b *v1alpha1.Bellerophon) { b.Status.ReadyReplicas = 1 }, "readyReplicas = 1, want 2"},
		"config changed":           {func(b *v1alpha1.Bellerophon) { b.Spec.Config = map[string]string{"k": "w"} }, "does not match the spec.config"},
		"version changed":          {func(b *v1alpha1.Bellerophon) { b.Spec.Version = "2" }, "does not run bellerophon:2"},
		"no finalizer":             {func(b *v1alpha1.Bellerophon) { b.Finalizers = nil }, "lacks the finalizer"},
	} {
		w, b := converged()
		tc.mutate(b)
		w.objs = w.objs[1:]
		w.add(v1alpha1.Resource, b)
		if ok, why := Desired(w.objs); ok || !strings.Contains(why, tc.want) {
			t.Errorf("%s: Desired = %v (%s), want false naming %q", name, ok, why, tc.want)
		}
	}
}

// TestCRDCarriesTheManifestSchema: the in-process lab registers
// Bellerophons with the manifest's openAPIV3Schema, so its server
// validates them on the store's apiextensions path, shared with serve and
// the fidelity corpus (fakeapi/store's schema tests, serve's
// TestServeValidatesCustomResourcesAgainstTheirCRDSchema).
func TestCRDCarriesTheManifestSchema(t *testing.T) {
	c := CRD()
	if c.OpenAPIV3Schema == nil || c.Validate != nil {
		t.Fatalf("CRD() = %+v, want the manifest's schema and no Go validator", c)
	}
	if _, found, _ := unstructured.NestedMap(c.OpenAPIV3Schema, "properties", "spec", "properties", "replicas"); !found {
		t.Errorf("schema %v lacks spec.replicas", c.OpenAPIV3Schema)
	}
}

// Subject.Desired keeps what it decoded for its next call (the recorder
// asks after every write, and all objects but the written one are the same
// bytes): one Subject asked of a sequence of worlds, each differing from
// the last in one object, answers each as Desired does from scratch; the
// same bytes under two resources are decoded as each resource's object.
func TestSubjectDesiredAnswersAsDesiredAcrossCalls(t *testing.T) {
	s := NewSubject(Options{})
	var worlds [][]sim.ServerObject
	w, b := converged()
	worlds = append(worlds, w.objs)
	for _, mutate := range []func(b *v1alpha1.Bellerophon){
		func(b *v1alpha1.Bellerophon) { b.Status.ObservedGeneration = 1 },
		func(b *v1alpha1.Bellerophon) { b.Spec.Version = "2" },
		func(b *v1alpha1.Bellerophon) {},
		func(b *v1alpha1.Bellerophon) { b.Finalizers = nil },
	} {
		m := b.DeepCopy()
		mutate(m)
		next := &world{objs: append([]sim.ServerObject(nil), w.objs[1:]...)}
		next.add(v1alpha1.Resource, m)
		worlds = append(worlds, next.objs)
	}
	worlds = append(worlds, w.objs)
	// A ConfigMap's bytes also stored as a Pod's: decoded as a Pod there.
	twice := append([]sim.ServerObject(nil), w.objs...)
	twice = append(twice, sim.ServerObject{Resource: podsGVR, Object: w.objs[len(w.objs)-1].Object})
	worlds = append(worlds, twice, w.objs)
	var answers []bool
	for i, objs := range worlds {
		ok, why := s.Desired(objs)
		wantOK, wantWhy := Desired(objs)
		if ok != wantOK || why != wantWhy {
			t.Errorf("world %d: Subject.Desired = %v %q, Desired = %v %q", i, ok, why, wantOK, wantWhy)
		}
		answers = append(answers, ok)
	}
	if !slices.Contains(answers, true) || !slices.Contains(answers, false) {
		t.Errorf("answers %v: want worlds that hold and worlds that do not", answers)
	}
}
