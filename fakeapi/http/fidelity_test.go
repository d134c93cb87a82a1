package http_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cachelab/cachelab/fakeapi"
)

// The tests in this file each pin one answer the fidelity corpus
// (package fidelity) recorded from a real kube-apiserver and the handler
// once gave differently.

func TestDeleteCollectionAnswersTheListOfDeletedObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "user")
		mustNamespace(t, cs, "ns")
		for name, set := range map[string]string{"a": "x", "b": "x", "c": "y"} {
			c := cm("ns", name, nil)
			c.Labels = map[string]string{"set": set}
			if _, err := cs.CoreV1().ConfigMaps("ns").Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		lo := metav1.ListOptions{LabelSelector: "set=x"}
		var code int
		raw, err := cs.CoreV1().RESTClient().Delete().Namespace("ns").Resource("configmaps").
			VersionedParams(&lo, scheme.ParameterCodec).SetHeader("Accept", "application/json").
			Do(context.Background()).StatusCode(&code).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var list corev1.ConfigMapList
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		var names []string
		for _, it := range list.Items {
			names = append(names, it.Name)
		}
		if code != 200 || list.Kind != "ConfigMapList" || len(names) != 2 || names[0] != "a" || names[1] != "b" {
			t.Errorf("answer: %d %s %v, want 200 ConfigMapList [a b]", code, list.Kind, names)
		}
		left, err := cs.CoreV1().ConfigMaps("ns").List(context.Background(), metav1.ListOptions{})
		if err != nil || len(left.Items) != 1 || left.Items[0].Name != "c" {
			t.Errorf("left: %v, %v; want [c]", left, err)
		}
	})
}

func TestCreateWithUnknownFieldsIsRefusedOnlyWhenStrict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "user")
		mustNamespace(t, cs, "ns")
		body := func(name string) []byte {
			return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"Data":{"k":"v"},"extra":"x"}`)
		}
		for _, tc := range []struct {
			name, validation string
			code             int
		}{{"a", "", 201}, {"b", metav1.FieldValidationStrict, 400}, {"c", metav1.FieldValidationIgnore, 201}, {"d", metav1.FieldValidationWarn, 201}} {
			var code int
			req := cs.CoreV1().RESTClient().Post().Namespace("ns").Resource("configmaps").SetHeader("Content-Type", "application/json").Body(body(tc.name))
			if tc.validation != "" {
				req = req.Param("fieldValidation", tc.validation)
			}
			raw, _ := req.Do(context.Background()).StatusCode(&code).Raw()
			if code != tc.code {
				t.Errorf("create %s (fieldValidation %q): %d %s, want %d", tc.name, tc.validation, code, raw, tc.code)
				continue
			}
			if code == 201 {
				var got corev1.ConfigMap
				if err := json.Unmarshal(raw, &got); err != nil || len(got.Data) != 0 {
					t.Errorf("create %s: data %v (%v), want none: \"Data\" is not \"data\"", tc.name, got.Data, err)
				}
			}
		}
	})
}

func TestNamespaceDeleteIsAnsweredWithTheTerminatingNamespace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "user")
		mustNamespace(t, cs, "x")
		var code int
		raw, err := cs.CoreV1().RESTClient().Delete().Resource("namespaces").Name("x").
			SetHeader("Accept", "application/json").Do(context.Background()).StatusCode(&code).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var ns corev1.Namespace
		if err := json.Unmarshal(raw, &ns); err != nil || code != 200 || ns.Kind != "Namespace" || ns.DeletionTimestamp == nil || ns.Status.Phase != corev1.NamespaceTerminating {
			t.Errorf("answer %d %s (%v), want 200 with the Namespace, deletionTimestamp set, phase Terminating", code, raw, err)
		}
		if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "x", metav1.GetOptions{}); err == nil {
			t.Errorf("namespace still there after the delete of an empty namespace, want it gone (the namespace controller's work is done at once)")
		}
	})
}
