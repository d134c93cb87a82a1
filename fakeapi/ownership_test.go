package fakeapi_test

import (
	"context"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestEveryWatchAndTheWriterGetTheirOwnObject: a write's answer and the
// event each watch delivers are distinct objects (one watch may get the
// store's own, handed over, the others copies), so a consumer that
// modifies what it got changes nobody else's, and the next write's event
// is not affected either. Run with -race, it also checks the handed-over
// object is read by nothing once delivered.
func TestEveryWatchAndTheWriterGetTheirOwnObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := fakeapi.NewServer(fakeapi.Options{})
		c := s.Client("writer")
		ctx := t.Context()
		var ws []watch.Interface
		for range 3 {
			w, err := s.Client("watcher").Watch(ctx, cmGVR, "ns", metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			ws = append(ws, w)
		}
		for round, verb := range []string{"create", "update"} {
			var answer *corev1.ConfigMap
			if verb == "create" {
				answer = mustCreateCM(t, c, "ns", "a", map[string]string{"k": "v"})
			} else {
				cm := configMap("ns", "a", map[string]string{"k": "w"})
				got, err := c.Update(context.Background(), cmGVR, "ns", cm, metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				answer = got.(*corev1.ConfigMap)
			}
			want := answer.DeepCopy()
			seen := map[*corev1.ConfigMap]bool{answer: true}
			var got []*corev1.ConfigMap
			for i, w := range ws {
				ev := <-w.ResultChan()
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					t.Fatalf("%s: watch %d delivered %T", verb, i, ev.Object)
				}
				if seen[cm] {
					t.Fatalf("%s: watch %d delivered an object the writer or another watch also got", verb, i)
				}
				seen[cm] = true
				got = append(got, cm)
			}
			// Every consumer modifies its own.
			answer.Data["k"] = "writer's"
			for i, cm := range got {
				cm.Data["k"] = "watch's"
				cm.Labels = map[string]string{"touched": "yes"}
				if i == 0 {
					continue
				}
				if got[i-1].Data["k"] != "watch's" {
					t.Fatalf("%s: a watch's object changed with another's", verb)
				}
			}
			if got := mustGetCM(t, c, "ns", "a"); got.Data["k"] != want.Data["k"] || len(got.Labels) != 0 {
				t.Fatalf("round %d: the stored object changed with what consumers modified: %+v", round, got)
			}
		}
	})
}

func mustGetCM(t *testing.T, c *fakeapi.Client, ns, name string) *corev1.ConfigMap {
	t.Helper()
	obj, err := c.Get(context.Background(), cmGVR, ns, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.ConfigMap)
}
