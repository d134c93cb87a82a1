package sim_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/sim"
)

// fanOut is a subject that creates five ConfigMaps at once, each from a
// goroutine of its own, all with generateName "x-" and each with its own
// data: five requests that share a key but for their content, as the Job
// controller's Pod creates of an Indexed Job do (one goroutine per
// completion index). Which goroutine reaches the server first is Go's
// scheduling.
type fanOut struct{}

func (fanOut) Start(ctx context.Context, env sim.Env) error {
	for i := range 5 {
		go func() {
			_, _ = env.Kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "x-"},
				Data:       map[string]string{"index": fmt.Sprint(i)},
			}, metav1.CreateOptions{})
		}()
	}
	return nil
}

var registerFanOut = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/fan-out", Summary: "five creates of one kind from five goroutines at once", New: func() sim.Subject { return fanOut{} }})
})

// Five requests that differ only in their content, asked for at one
// instant by five goroutines, get the same names, latencies and faults in
// every run: the scheduler numbers them ("n-th such request", which names
// their latency and fault draws and their place in the delivery schedule)
// by their content, not by the order in which Go's scheduler brought them
// to the server. Before, 30 runs gave 10 different outcomes (which index
// was refused 503, and which got which generated name).
func TestSimultaneousRequestsOfOneKindAreNumberedByContentNotArrival(t *testing.T) {
	registerFanOut()
	outcomes := map[string]int{}
	var first string
	for range 30 {
		p := &sim.Plan{Version: 1, Seed: 3, Subject: "test/fan-out", Steps: []sim.Step{}, Faults: sim.FaultPolicy{
			ErrorRate: 0.4, ErrorCodes: []int{503}, Until: sim.Duration(time.Second),
			RequestLatency: sim.Distribution{Kind: "uniform", Max: sim.Duration(10 * time.Millisecond)},
		}}
		tr := run(t, p)
		var got []string
		for _, r := range tr.Records {
			switch {
			case r.Kind == sim.RecWrite && r.Actor == "test/fan-out":
				data := string(r.Object)
				data = data[strings.Index(data, `"index"`):]
				got = append(got, fmt.Sprintf("%s %s %s", r.At, r.Name, data[:len(`"index":"0"`)]))
			case r.Kind == sim.RecFault && r.Actor == sim.ActorFaults:
				got = append(got, fmt.Sprintf("%s %s", r.At, r.Fault))
			}
		}
		o := strings.Join(got, "; ") + " | " + strings.Join(tr.Schedule, ", ")
		if first == "" {
			first = o
		}
		outcomes[o]++
	}
	if len(outcomes) != 1 {
		for o, n := range outcomes {
			t.Logf("%d runs: %s", n, o)
		}
		t.Fatalf("30 runs of one plan gave %d different outcomes, want 1", len(outcomes))
	}
	if !strings.Contains(first, "error-503") || strings.Count(first, " x-") < 2 {
		t.Fatalf("the plan should refuse some creates and serve others: %s", first)
	}
	t.Log(first)
}
