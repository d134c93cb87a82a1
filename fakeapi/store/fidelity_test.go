package store

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The tests in this file each pin one answer the fidelity corpus
// (package fidelity) recorded from a real kube-apiserver and the store
// once gave differently.

func TestSecretWithoutTypeIsStoredAsOpaque(t *testing.T) {
	s, _ := newTestStore(t, 0)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: map[string][]byte{"k": []byte("v")}}
	out, _, err := s.Create(secretsGVR, "ns", sec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.Secret).Type; got != corev1.SecretTypeOpaque {
		t.Errorf("created type = %q, want Opaque", got)
	}
	upd := out.(*corev1.Secret).DeepCopy()
	upd.Type = ""
	upd.Data["k"] = []byte("w")
	out, _, err = s.Update(secretsGVR, "ns", upd, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatalf("update without type: %v", err)
	}
	if got := out.(*corev1.Secret).Type; got != corev1.SecretTypeOpaque {
		t.Errorf("updated type = %q, want Opaque", got)
	}
}

func TestRemovingTheLastFinalizerAnswersTheUpdatedStateAtItsResourceVersion(t *testing.T) {
	s, _ := newTestStore(t, 0)
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Finalizers: []string{"example.com/hold"}}}
	if _, _, err := s.Create(configmapsGVR, "ns", c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	marked, _, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upd := marked.(*corev1.ConfigMap).DeepCopy()
	upd.Finalizers = nil
	out, evs, err := s.Update(configmapsGVR, "ns", upd, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap)
	if len(got.Finalizers) != 0 || got.DeletionTimestamp == nil || got.ResourceVersion != upd.ResourceVersion {
		t.Errorf("answer: finalizers %v, deletionTimestamp %v, resourceVersion %s; want none, set, %s (the updated state)",
			got.Finalizers, got.DeletionTimestamp, got.ResourceVersion, upd.ResourceVersion)
	}
	if len(evs) != 1 || evs[0].Type != "DELETED" || len(evs[0].Object.(*corev1.ConfigMap).Finalizers) != 1 {
		t.Errorf("want one DELETED event with the last stored state (finalizer kept), got %+v", evs)
	}
}

func TestJSONPatchThatDoesNotApplyIsInvalidWithoutCauses(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}})
	_, _, err := s.Patch(configmapsGVR, "ns", "a", types.JSONPatchType, []byte(`[{"op":"test","path":"/data/k","value":"nope"}]`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	if st := err.(apierrors.APIStatus).Status(); st.Details == nil || len(st.Details.Causes) != 0 {
		t.Errorf("details = %+v, want present and without causes", st.Details)
	}
}

func TestDryRunsAnswerAsIfDoneAndWriteNothing(t *testing.T) {
	s, _ := newTestStore(t, 0)
	dry := []string{metav1.DryRunAll}
	// Create: the object it would store, with a UID and no resourceVersion.
	before := s.RV()
	out, evs, err := s.Create(configmapsGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.(*corev1.ConfigMap); c.UID == "" || c.ResourceVersion != "" || c.Data["k"] != "1" || len(evs) != 0 || s.RV() != before {
		t.Errorf("dry-run create: uid %q rv %q data %v, %d events, RV %d -> %d; want a uid, no rv, the data, nothing written", c.UID, c.ResourceVersion, c.Data, len(evs), before, s.RV())
	}
	if _, err := s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a dry-run create: %v, want NotFound", err)
	}
	created := mustCreate(t, s, configmapsGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}}).(*corev1.ConfigMap)
	before = s.RV()
	// Update and patch: the new state at the current resourceVersion.
	upd := created.DeepCopy()
	upd.Data["k"] = "2"
	out, evs, err = s.Update(configmapsGVR, "ns", upd, metav1.UpdateOptions{DryRun: dry}, "")
	if err != nil || out.(*corev1.ConfigMap).Data["k"] != "2" || out.(*corev1.ConfigMap).ResourceVersion != created.ResourceVersion || len(evs) != 0 {
		t.Errorf("dry-run update: %v, %d events, %v; want k=2 at rv %s, no events", out, len(evs), err, created.ResourceVersion)
	}
	out, evs, err = s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"data":{"k":"3"}}`), metav1.PatchOptions{DryRun: dry}, "")
	if err != nil || out.(*corev1.ConfigMap).Data["k"] != "3" || len(evs) != 0 {
		t.Errorf("dry-run patch: %v, %d events, %v; want k=3, no events", out, len(evs), err)
	}
	// Delete: the object stays.
	if _, evs, err := s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{DryRun: dry}); err != nil || len(evs) != 0 {
		t.Errorf("dry-run delete: %d events, %v", len(evs), err)
	}
	got, err := s.Get(configmapsGVR, "ns", "a", metav1.GetOptions{})
	if err != nil || got.(*corev1.ConfigMap).Data["k"] != "1" || s.RV() != before {
		t.Errorf("after dry runs: %v, %v, RV %d -> %d; want k=1 and nothing written", got, err, before, s.RV())
	}
	// A foreground dry-run delete answers the object as it would be marked.
	out, _, err = s.Delete(configmapsGVR, "ns", "a", metav1.DeleteOptions{DryRun: dry, PropagationPolicy: ptrTo(metav1.DeletePropagationForeground)})
	if m := out.(*corev1.ConfigMap); err != nil || m.DeletionTimestamp == nil || len(m.Finalizers) != 1 || s.RV() != before {
		t.Errorf("dry-run foreground delete: %v, %v; want it marked with foregroundDeletion, nothing written", out, err)
	}
	// Only "All" is a dry run.
	_, _, err = s.Create(configmapsGVR, "ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{DryRun: []string{"Some"}})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
}

func ptrTo[T any](v T) *T { return &v }

func TestNamespaceIsLabelledWithItsNameAndCarriesTheKubernetesFinalizer(t *testing.T) {
	s, _ := newTestStore(t, 0)
	out := mustCreate(t, s, namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}).(*corev1.Namespace)
	if out.Labels[corev1.LabelMetadataName] != "team" || len(out.Spec.Finalizers) != 1 || out.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Errorf("created namespace: labels %v, spec.finalizers %v; want kubernetes.io/metadata.name=team and [kubernetes]", out.Labels, out.Spec.Finalizers)
	}
	upd := out.DeepCopy()
	upd.Labels = map[string]string{"x": "y"}
	got, _, err := s.Update(namespacesGVR, "", upd, metav1.UpdateOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if l := got.(*corev1.Namespace).Labels; l[corev1.LabelMetadataName] != "team" || l["x"] != "y" {
		t.Errorf("updated namespace labels %v, want x=y and the name label kept", l)
	}
}

func TestMergePatchFieldNamesAreCaseSensitive(t *testing.T) {
	s, _ := newTestStore(t, 0)
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{"k": "1"}}
	created, _, err := s.Create(configmapsGVR, "ns", c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := created.(*corev1.ConfigMap).ResourceVersion
	out, evs, err := s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"Data":{"k":"2","n":"3"}}`), metav1.PatchOptions{}, "")
	if err != nil {
		t.Fatalf("patch of an unknown field (default fieldValidation): %v, want it dropped", err)
	}
	got := out.(*corev1.ConfigMap)
	if len(got.Data) != 1 || got.Data["k"] != "1" || got.ResourceVersion != rv || len(evs) != 0 {
		t.Errorf("after patching \"Data\": data %v at resourceVersion %s with %d events; want data untouched {k:1} at %s and no write",
			got.Data, got.ResourceVersion, len(evs), rv)
	}
	_, _, err = s.Patch(configmapsGVR, "ns", "a", types.MergePatchType, []byte(`{"Data":{"k":"4"}}`), metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict}, "")
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Code != 422 || st.Status().Details == nil || len(st.Status().Details.Causes) != 1 || st.Status().Details.Causes[0].Field != "patch" {
		t.Errorf("strict patch of an unknown field: %v, want 422 Invalid with one cause on \"patch\"", err)
	}
}

func TestCustomResourcesArePrunedAndStrictValidationRefusesUnknownFields(t *testing.T) {
	s, _ := newTestStore(t, 0)
	gadgets := schema.GroupVersionResource{Group: "lab.example.com", Version: "v1", Resource: "gadgets"}
	// Prune stands in for a structural schema that knows spec.size only.
	prune := func(u *unstructured.Unstructured) []string {
		var unknown []string
		for k := range u.Object {
			if k != "apiVersion" && k != "kind" && k != "metadata" && k != "spec" {
				delete(u.Object, k)
				unknown = append(unknown, k)
			}
		}
		spec, _ := u.Object["spec"].(map[string]any)
		for k := range spec {
			if k != "size" {
				delete(spec, k)
				unknown = append(unknown, "spec."+k)
			}
		}
		return unknown
	}
	if err := s.Register(Resource{GVR: gadgets, Kind: "Gadget", Namespaced: true, Prune: prune}); err != nil {
		t.Fatal(err)
	}
	gadget := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "lab.example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(1), "colour": "red"}, "Spec": map[string]any{}}}
	}
	out, _, err := s.Create(gadgets, "ns", gadget("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	if _, ok := got.Object["Spec"]; ok || len(got.Object["spec"].(map[string]any)) != 1 {
		t.Errorf("created %v, want Spec and spec.colour pruned", got.Object)
	}
	_, _, err = s.Create(gadgets, "ns", gadget("b"), metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "spec.colour"`) {
		t.Errorf("strict create: %v, want 400 BadRequest naming spec.colour", err)
	}
	out, evs, err := s.Patch(gadgets, "ns", "a", types.MergePatchType, []byte(`{"spec":{"colour":"blue"}}`), metav1.PatchOptions{}, "")
	if err != nil || len(evs) != 0 || out.(*unstructured.Unstructured).GetResourceVersion() != got.GetResourceVersion() {
		t.Errorf("patch of an unknown field: %v, %d events; want it pruned: no write, resourceVersion %s", err, len(evs), got.GetResourceVersion())
	}
	_, _, err = s.Patch(gadgets, "ns", "a", types.MergePatchType, []byte(`{"spec":{"colour":"blue"}}`), metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict}, "")
	if st, ok := err.(apierrors.APIStatus); !ok || st.Status().Code != 422 {
		t.Errorf("strict patch of an unknown field: %v, want 422 Invalid", err)
	}
}
