package store

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// frozenStrategy is a Strategy for ConfigMaps with rules the hand-written
// ones do not have, so a test can tell which ran: it labels every body
// (Default), refuses a data key "bad" (Create and Update), keeps the key
// "frozen" as it was (Update), and records the UID and subresource it saw.
type frozenStrategy struct {
	createdUIDs []types.UID
	subs        []string
	// wrongType makes Create answer a Secret.
	wrongType bool
}

func (f *frozenStrategy) Default(obj runtime.Object) {
	cm := obj.(*corev1.ConfigMap)
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["defaulted"] = "yes"
}

func (f *frozenStrategy) Create(obj runtime.Object) (runtime.Object, field.ErrorList) {
	cm := obj.(*corev1.ConfigMap)
	f.createdUIDs = append(f.createdUIDs, cm.UID)
	if f.wrongType {
		return &corev1.Secret{}, nil
	}
	if _, ok := cm.Data["bad"]; ok {
		return nil, field.ErrorList{field.Forbidden(field.NewPath("data").Key("bad"), "refused by the strategy")}
	}
	return cm, nil
}

func (f *frozenStrategy) Update(obj, old runtime.Object, sub string) (runtime.Object, field.ErrorList) {
	f.subs = append(f.subs, sub)
	cm, oldCM := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	if _, ok := cm.Data["bad"]; ok {
		return nil, field.ErrorList{field.Forbidden(field.NewPath("data").Key("bad"), "refused by the strategy")}
	}
	if v, ok := oldCM.Data["frozen"]; ok {
		cm.Data["frozen"] = v
	}
	return cm, nil
}

// registerForTest registers st for configmaps until the test ends.
func registerForTest(t *testing.T, st Strategy) {
	t.Helper()
	RegisterStrategy(configmapsGVR.GroupResource(), st)
	t.Cleanup(func() { RegisterStrategy(configmapsGVR.GroupResource(), nil) })
}

func TestRegisteredStrategyServesCreateUpdateAndPatch(t *testing.T) {
	st := &frozenStrategy{}
	registerForTest(t, st)
	s, _ := newTestStore(t, 0)
	if !s.ServedByStrategy(configmapsGVR) || s.ServedByStrategy(secretsGVR) {
		t.Fatalf("ServedByStrategy: configmaps %v (want true), secrets %v (want false)", s.ServedByStrategy(configmapsGVR), s.ServedByStrategy(secretsGVR))
	}
	if got := Strategies(); len(got) != 1 || got[0] != configmapsGVR.GroupResource() {
		t.Fatalf("Strategies() = %v, want [configmaps]", got)
	}

	// A refused create answers 422 with the strategy's cause and uses up
	// no UID: the next object gets the UID the refused one was shown.
	bad := cm("ns", "bad", nil)
	bad.Data = map[string]string{"bad": "x"}
	_, _, err := s.Create(configmapsGVR, "ns", bad, metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if c := err.(apierrors.APIStatus).Status().Details.Causes; len(c) != 1 || c[0].Field != "data[bad]" {
		t.Fatalf("causes = %+v, want one on data[bad]", c)
	}
	good := cm("ns", "a", nil)
	good.Data = map[string]string{"frozen": "1"}
	created := mustCreate(t, s, configmapsGVR, "ns", good).(*corev1.ConfigMap)
	if len(st.createdUIDs) != 2 || st.createdUIDs[0] != st.createdUIDs[1] || created.UID != st.createdUIDs[1] {
		t.Fatalf("the strategy saw UIDs %v, the object got %s: want the same UID twice and on the object", st.createdUIDs, created.UID)
	}
	if created.Labels["defaulted"] != "yes" {
		t.Fatalf("create: the strategy's Default did not run: labels %v", created.Labels)
	}

	// Update: the strategy sees the stored object and keeps "frozen".
	upd := created.DeepCopy()
	upd.Labels = nil
	upd.Data["frozen"] = "2"
	out, _, err := s.Update(configmapsGVR, "ns", upd, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.ConfigMap); got.Data["frozen"] != "1" || got.Labels["defaulted"] != "yes" {
		t.Fatalf("update: data %v labels %v, want frozen=1 kept and the default label", got.Data, got.Labels)
	}
	// Patch goes through it too.
	_, _, err = s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"data":{"bad":"x"}}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if len(st.subs) != 2 {
		t.Fatalf("Update called %d times (%v), want 2 (update, patch)", len(st.subs), st.subs)
	}
}

func TestWithoutAStrategyTheHandWrittenRulesRun(t *testing.T) {
	st := &frozenStrategy{}
	registerForTest(t, st)
	before, _ := newTestStore(t, 0)
	RegisterStrategy(configmapsGVR.GroupResource(), nil)
	after, _ := newTestStore(t, 0)
	if !before.ServedByStrategy(configmapsGVR) || after.ServedByStrategy(configmapsGVR) {
		t.Fatalf("a store keeps what was registered when it was made: before %v after %v", before.ServedByStrategy(configmapsGVR), after.ServedByStrategy(configmapsGVR))
	}
	obj := cm("ns", "a", nil)
	obj.Data = map[string]string{"bad": "x"}
	created := mustCreate(t, after, configmapsGVR, "ns", obj).(*corev1.ConfigMap)
	if _, ok := created.Labels["defaulted"]; ok || len(st.createdUIDs) != 0 {
		t.Fatalf("an unregistered strategy ran: labels %v, calls %d", created.Labels, len(st.createdUIDs))
	}
	// The hand-written rules still refuse what they refuse.
	_, _, err := after.Create(configmapsGVR, "ns", cm("ns", "Bad_Name", nil), metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
}

func TestAStrategyAnsweringTheWrongTypeIsA422NotAPanic(t *testing.T) {
	registerForTest(t, &frozenStrategy{wrongType: true})
	s, _ := newTestStore(t, 0)
	_, _, err := s.Create(configmapsGVR, "ns", cm("ns", "a", nil), metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if n := s.RV(); n != 1 {
		t.Fatalf("a refused create wrote: resourceVersion %d", n)
	}
}

// WithoutStrategies suspends every registration for the stores created
// inside it (cachelab bench's hand-written rows) and restores them after.
func TestWithoutStrategiesSuspendsRegistrationsAndRestoresThem(t *testing.T) {
	registerForTest(t, &frozenStrategy{})
	hpa := schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
	conv, _ := LabConverter(hpa)
	RegisterConverter(hpa, conv)
	t.Cleanup(func() { RegisterConverter(hpa, nil) })
	WithoutStrategies(func() {
		s, _ := newTestStore(t, 0)
		if s.ServedByStrategy(configmapsGVR) || len(Strategies()) != 0 {
			t.Errorf("inside WithoutStrategies: configmaps served by a strategy %v, %d registered; want none", s.ServedByStrategy(configmapsGVR), len(Strategies()))
		}
		if registeredConverter(hpa, nil) != nil {
			t.Error("inside WithoutStrategies the HPA converter is still registered")
		}
	})
	s, _ := newTestStore(t, 0)
	if !s.ServedByStrategy(configmapsGVR) || registeredConverter(hpa, nil) == nil {
		t.Errorf("after WithoutStrategies: configmaps served by a strategy %v, converter %v; want both restored", s.ServedByStrategy(configmapsGVR), registeredConverter(hpa, nil))
	}
}
