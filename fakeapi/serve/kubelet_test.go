package serve_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/fakeapi/serve"
)

// TestKubeletMakesPodsRunningAndReadyAfterItsDelay: with Options.Kubelet a
// Pod created over HTTPS becomes Running with Ready=True, no sooner than
// KubeletReadyAfter (it is created Pending, as the ADDED event shows);
// shutdown still ends cleanly with the kubelet's informer running.
func TestKubeletMakesPodsRunningAndReadyAfterItsDelay(t *testing.T) {
	const after = 200 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := serve.Serve(ctx, serve.Options{Kubelet: true, KubeletReadyAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(r.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	w, err := cs.CoreV1().Pods("default").Watch(bg, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created := time.Now()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(bg, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for ready := false; !ready; {
		select {
		case ev := <-w.ResultChan():
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				t.Fatalf("watch: %s %v", ev.Type, ev.Object)
			}
			if ev.Type == watch.Added {
				if p.Status.Phase == corev1.PodRunning || len(p.Status.Conditions) != 0 {
					t.Fatalf("created pod: phase %s, conditions %v; want neither before the kubelet", p.Status.Phase, p.Status.Conditions)
				}
				continue
			}
			if p.Status.Phase != corev1.PodRunning || len(p.Status.Conditions) != 1 ||
				p.Status.Conditions[0].Type != corev1.PodReady || p.Status.Conditions[0].Status != corev1.ConditionTrue {
				t.Fatalf("kubelet's update: phase %s, conditions %v; want Running and Ready=True", p.Status.Phase, p.Status.Conditions)
			}
			if d := time.Since(created); d < after {
				t.Errorf("pod Ready %v after its create, want at least %v", d, after)
			}
			ready = true
		case <-deadline:
			t.Fatal("pod not Ready 10s after its create")
		}
	}

	// client-go's own metrics of the kubelet's queue and informer, on
	// /metrics with a client label: one Pod queued once (with a delay: a
	// retry, as client-go counts them), taken, the queue empty again; the
	// Pod informer's store at the Pod's resourceVersion or later.
	rt, err := rest.TransportFor(r.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt}).Get(r.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`workqueue_adds_total{client="kubelet",name="kubelet"} 1`,
		`workqueue_retries_total{client="kubelet",name="kubelet"} 1`,
		`workqueue_depth{client="kubelet",name="kubelet"} 0`,
		`workqueue_queue_duration_seconds_count{client="kubelet",name="kubelet"} 1`,
		`informer_store_resource_version{client="kubelet",name="pods"}`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cancel()
	if err := r.Wait(); err != nil {
		t.Errorf("Wait = %v", err)
	}

}
