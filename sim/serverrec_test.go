package sim

import (
	"bytes"
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

func TestServerRecorderTracesWhatAServerOutsideRunServed(t *testing.T) {
	rec := NewServerRecorder(nil)
	srv := fakeapi.NewServer(fakeapi.Options{Observer: rec})
	defer srv.Close()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if _, err := srv.Client("kubectl").Create(context.Background(), gvr, "default", cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr := rec.Trace("shutdown")
	var writes int
	for _, r := range tr.Records {
		if r.Kind == RecWrite && r.Name == "a" && r.Actor == "kubectl" && r.RV > 0 {
			writes++
		}
	}
	if writes != 1 {
		t.Fatalf("trace has %d write records of configmap a by kubectl, want 1: %+v", writes, tr.Records)
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, tr); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(&buf)
	if err != nil {
		t.Fatalf("the served trace does not read back: %v", err)
	}
	if back.Outcome != "shutdown" || len(back.Records) != len(tr.Records) {
		t.Fatalf("read back outcome %q with %d records, want shutdown with %d", back.Outcome, len(back.Records), len(tr.Records))
	}
}
