package subjecttest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/sim"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// ServerConfigMaps returns the server's ConfigMaps as sim.ServerObjects, for
// a sim.Converger.
func ServerConfigMaps(t *testing.T, ctx context.Context, c *fakeapi.Client) []sim.ServerObject {
	t.Helper()
	obj, err := c.List(ctx, configmaps, "", metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list configmaps: %v", err)
	}
	l, ok := obj.(*corev1.ConfigMapList)
	if !ok {
		t.Fatalf("list configmaps gave a %T", obj)
	}
	var out []sim.ServerObject
	for i := range l.Items {
		b, err := json.Marshal(&l.Items[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sim.ServerObject{Resource: configmaps, Object: b})
	}
	return out
}

// MirrorStory drives a mirror-controller subject against a real fakeapi
// server (no faults) through a short story, inside the caller's synctest
// bubble: sources a and b exist before the start; after 5s the user changes
// a's data; after 10s the user deletes b. After each chapter it checks the
// subject's Desired on the server's state. It returns the records and the
// user client. params are the subject's parameters.
func MirrorStory(t *testing.T, subject sim.Subject, name string, params map[string]string) (*Recorder, *fakeapi.Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		time.Sleep(time.Second) // let every goroutine see the cancel
	}()
	srv := fakeapi.NewServer(fakeapi.Options{})
	user := srv.Client("user")
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
	if _, err := user.Create(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	for _, n := range []string{"a", "b"} {
		cm := ConfigMap("ns", n, "", 0, map[string]string{"from": n})
		cm.UID, cm.ResourceVersion = "", ""
		if _, err := user.Create(ctx, configmaps, "ns", cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", n, err)
		}
	}
	client := srv.Client(name)
	rec := NewRecorder()
	err := subject.Start(ctx, sim.Env{
		Name:    name,
		Kube:    client.Clientset(),
		Dynamic: client.Dynamic(),
		ListerWatcher: func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
			return client.ListerWatcher(gvr, ns)
		},
		Rec:    rec,
		Params: params,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	conv := subject.(sim.Converger)
	check := func(chapter string) {
		t.Helper()
		if ok, why := conv.Desired(ServerConfigMaps(t, ctx, user)); !ok {
			t.Fatalf("%s: not converged: %s\n%s", chapter, why, Dump(rec.Records()))
		}
	}
	time.Sleep(5 * time.Second)
	check("start")

	obj, err := user.Get(ctx, configmaps, "ns", "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := obj.(*corev1.ConfigMap)
	a.Data = map[string]string{"from": "a", "changed": "yes"}
	if _, err := user.Update(ctx, configmaps, "ns", a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update a: %v", err)
	}
	time.Sleep(5 * time.Second)
	check("after updating a")

	if err := user.Delete(ctx, configmaps, "ns", "b", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete b: %v", err)
	}
	time.Sleep(5 * time.Second)
	check("after deleting b")
	if _, err := user.Get(ctx, configmaps, "ns", "b-mirror", metav1.GetOptions{}); err == nil {
		t.Errorf("b-mirror still on the server after b was deleted")
	}
	return rec, user
}

// RequireFullTrace fails t unless the records hold handler, queue,
// reconcile (start and end), signal and cache records.
func RequireFullTrace(t *testing.T, rec *Recorder) {
	t.Helper()
	for _, kind := range []sim.RecordKind{sim.RecHandler, sim.RecQueue, sim.RecReconcile, sim.RecSignal, sim.RecCache} {
		if len(rec.Of(kind)) == 0 {
			t.Errorf("no %s record in the trace\n%s", kind, Dump(rec.Records()))
		}
	}
	var starts, ends int
	for _, r := range rec.Of(sim.RecReconcile) {
		switch r.Op {
		case "start":
			starts++
		case "end":
			ends++
		}
	}
	if starts == 0 || starts != ends {
		t.Errorf("reconcile records: %d starts, %d ends", starts, ends)
	}
}
