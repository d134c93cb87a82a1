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
