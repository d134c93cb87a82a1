package fidelity

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// configMap is a ConfigMap named name with data.
func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       data,
	}
}

// labelled returns cm with labels.
func labelled(cm *corev1.ConfigMap, labels map[string]string) *corev1.ConfigMap {
	cm.Labels = labels
	return cm
}

// held returns cm with finalizers.
func held(cm *corev1.ConfigMap, finalizers ...string) *corev1.ConfigMap {
	cm.Finalizers = finalizers
	return cm
}

// ownedBy returns cm with an ownerReference to the ConfigMap owner (name,
// uid), blocking the owner's foreground deletion if block.
func ownedBy(cm *corev1.ConfigMap, owner, uid string, block bool) *corev1.ConfigMap {
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner, UID: types.UID(uid)}
	if block {
		ref.BlockOwnerDeletion = &block
	}
	cm.OwnerReferences = append(cm.OwnerReferences, ref)
	return cm
}

// secret is a Secret named name of type typ ("" leaves it to the server).
func secret(name string, typ corev1.SecretType, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       typ,
		Data:       map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// bellerophon is a Bellerophon named name with spec.replicas and
// spec.version.
func bellerophon(name string, replicas int64, version string) map[string]any {
	return map[string]any{
		"apiVersion": "lab.cachelab.dev/v1alpha1",
		"kind":       "Bellerophon",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"replicas": replicas, "version": version},
	}
}

// with returns a deep copy of obj (a JSON map) with path set to value
// (nil deletes it).
func with(obj map[string]any, value any, path ...string) map[string]any {
	out := runtime.DeepCopyJSON(normalizeJSON(obj).(map[string]any))
	m := out
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	last := path[len(path)-1]
	if value == nil {
		delete(m, last)
	} else {
		m[last] = normalizeJSON(value)
	}
	return out
}

// normalizeJSON turns the Go values cases write (int, []string,
// map[string]string) and encoding/json's float64 into the values
// runtime.DeepCopyJSON accepts.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	}
	return v
}

// future returns a resourceVersion far ahead of rv.
func future(rv string) string {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		panic(caseFailure{fmt.Errorf("not a resourceVersion: %q", rv)})
	}
	return strconv.FormatUint(n+1_000_000, 10)
}
