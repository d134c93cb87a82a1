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

// ConfigMaps is the resource the mirror subjects watch.
var ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// Lab is a real fakeapi server with a user client and one subject under
// test, for tests running inside a synctest bubble.
type Lab struct {
	// Server is the fake API server.
	Server *fakeapi.Server
	// User is the client tests write with.
	User *fakeapi.Client
	// Rec records the subject.
	Rec *Recorder
	// Name is the subject's client and actor name.
	Name    string
	subject sim.Subject
}

// NewLab starts a server with hooks (nil: none), creates namespace "ns" and
// a source ConfigMap with data {"from": name} for each name.
func NewLab(t *testing.T, ctx context.Context, hooks fakeapi.Hooks, sources ...string) *Lab {
	t.Helper()
	srv := fakeapi.NewServer(fakeapi.Options{Hooks: hooks})
	l := &Lab{Server: srv, User: srv.Client("user"), Rec: NewRecorder()}
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
	if _, err := l.User.Create(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	for _, n := range sources {
		l.CreateSource(t, ctx, n)
	}
	return l
}

// CreateSource creates ConfigMap ns/name with data {"from": name}.
func (l *Lab) CreateSource(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Data:       map[string]string{"from": name},
	}
	if _, err := l.User.Create(ctx, ConfigMaps, "ns", cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// Start starts subject as client name with params.
func (l *Lab) Start(t *testing.T, ctx context.Context, subject sim.Subject, name string, params map[string]string) {
	t.Helper()
	client := l.Server.Client(name)
	l.Name, l.subject = name, subject
	err := subject.Start(ctx, sim.Env{
		Name:    name,
		Kube:    client.Clientset(),
		Dynamic: client.Dynamic(),
		ListerWatcher: func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext {
			return client.ListerWatcher(gvr, ns)
		},
		Rec:    l.Rec,
		Params: params,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// ServerObjects returns the server's ConfigMaps as sim.ServerObjects.
func (l *Lab) ServerObjects(t *testing.T, ctx context.Context) []sim.ServerObject {
	t.Helper()
	obj, err := l.User.List(ctx, ConfigMaps, "", metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list configmaps: %v", err)
	}
	list, ok := obj.(*corev1.ConfigMapList)
	if !ok {
		t.Fatalf("list configmaps gave a %T", obj)
	}
	var out []sim.ServerObject
	for i := range list.Items {
		b, err := json.Marshal(&list.Items[i])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sim.ServerObject{Resource: ConfigMaps, Object: b})
	}
	return out
}

// RequireDesired fails t unless the subject's Converger accepts the
// server's state.
func (l *Lab) RequireDesired(t *testing.T, ctx context.Context, chapter string) {
	t.Helper()
	if ok, why := l.subject.(sim.Converger).Desired(l.ServerObjects(t, ctx)); !ok {
		t.Fatalf("%s: not converged: %s\n%s", chapter, why, Dump(l.Rec.Records()))
	}
}

// Watches returns the subject's open ConfigMap watches.
func (l *Lab) Watches() []fakeapi.WatcherInfo {
	var out []fakeapi.WatcherInfo
	for _, w := range l.Server.Watchers() {
		if w.Client == l.Name && w.Resource == ConfigMaps {
			out = append(out, w)
		}
	}
	return out
}

// DelayWatchEventsOf returns hooks holding every event sent to client's
// watches for d (initial WatchList events included).
func DelayWatchEventsOf(client string, d time.Duration) fakeapi.Hooks {
	return fakeapi.HookFuncs{Delay: func(w fakeapi.WatcherInfo, _ fakeapi.EventInfo) time.Duration {
		if w.Client == client {
			return d
		}
		return 0
	}}
}

// DeleteDuringGap deletes source name while the subject's watch holds its
// events (the lab must delay them, see DelayWatchEventsOf), then expires
// the subject's watch: the queued delete is dropped with the connection and
// the subject must relist to learn of it.
func (l *Lab) DeleteDuringGap(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if err := l.User.Delete(ctx, ConfigMaps, "ns", name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
	ws := l.Watches()
	if len(ws) != 1 {
		t.Fatalf("want one open watch of %s, have %v", l.Name, ws)
	}
	if err := l.Server.ExpireWatch(ws[0].ID); err != nil {
		t.Fatalf("expire watch: %v", err)
	}
}

// MirrorStory drives a mirror-controller subject against a real fakeapi
// server (no faults) through a short story, inside the caller's synctest
// bubble: sources a and b exist before the start; after 5s the user changes
// a's data; after 10s the user deletes b. After each chapter the subject's
// Desired must accept the server's state. It returns the records once the
// subject has been stopped.
func MirrorStory(t *testing.T, subject sim.Subject, name string, params map[string]string) *Recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		time.Sleep(time.Second) // let every goroutine see the cancel
	}()
	l := NewLab(t, ctx, nil, "a", "b")
	l.Start(t, ctx, subject, name, params)
	time.Sleep(5 * time.Second)
	l.RequireDesired(t, ctx, "start")

	obj, err := l.User.Get(ctx, ConfigMaps, "ns", "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := obj.(*corev1.ConfigMap)
	a.Data = map[string]string{"from": "a", "changed": "yes"}
	if _, err := l.User.Update(ctx, ConfigMaps, "ns", a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update a: %v", err)
	}
	time.Sleep(5 * time.Second)
	l.RequireDesired(t, ctx, "after updating a")

	if err := l.User.Delete(ctx, ConfigMaps, "ns", "b", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete b: %v", err)
	}
	time.Sleep(5 * time.Second)
	l.RequireDesired(t, ctx, "after deleting b")
	if _, err := l.User.Get(ctx, ConfigMaps, "ns", "b-mirror", metav1.GetOptions{}); err == nil {
		t.Errorf("b-mirror still on the server after b was deleted")
	}
	return l.Rec
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
