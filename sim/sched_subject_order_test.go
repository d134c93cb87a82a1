package sim_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/sim"
)

// picks are the ConfigMaps test/picker reads, one per start, in order;
// once they run out it reads "a".
var picks struct {
	sync.Mutex
	next []string
}

// setPicks sets the names test/picker reads at its next starts.
func setPicks(names ...string) {
	picks.Lock()
	defer picks.Unlock()
	picks.next = names
}

// picker is a subject that decides on its own which object it acts on:
// at start it reads one ConfigMap, the next of picks. It stands for a
// controller whose choice of object the lab does not decide (the Job
// controller deletes the first Pods of a list that comes out of its
// lister's Go map, sorted with ties).
type picker struct{}

func (picker) Start(ctx context.Context, env sim.Env) error {
	picks.Lock()
	name := "a"
	if len(picks.next) > 0 {
		name, picks.next = picks.next[0], picks.next[1:]
	}
	picks.Unlock()
	go func() { _, _ = env.Kube.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{}) }()
	return nil
}

var registerPicker = sync.OnceFunc(func() {
	sim.RegisterSubject(sim.SubjectInfo{Name: "test/picker", Summary: "reads a ConfigMap it picks itself", New: func() sim.Subject { return picker{} }})
	// The same, under the name of one of the lab's own actors, whose
	// order is the lab's.
	sim.RegisterSubject(sim.SubjectInfo{Name: sim.ClientCompetitor, Summary: "test/picker named as the competitor", New: func() sim.Subject { return picker{} }})
})

// pickerPlan starts test/picker with ConfigMaps a and b.
func pickerPlan() *sim.Plan {
	return &sim.Plan{Version: 1, Seed: 1, Subject: "test/picker", Steps: []sim.Step{}, Objects: []json.RawMessage{cm("a"), cm("b")}}
}

// A replay in which the subject acts on another object than the recorded
// run did, with the same inputs so far, says so: the divergence names the
// object the schedule wanted and the one the subject asked about, and says
// the choice is the subject's own (sim.IsSubjectOrderDivergence), not an
// order the lab should have decided, nor client-go's order within a batch.
// The replay starts over, as for client-go's map order, and follows the
// recorded run once the subject picks the same object again.
func TestAReplayWhereTheSubjectPicksAnotherObjectSaysItIsTheSubjectsOrder(t *testing.T) {
	registerPicker()
	setPicks("a")
	recorded := run(t, pickerPlan())
	want := "req test/picker get configmaps/default/a #1"
	if !slices.Contains(recorded.Schedule, want) {
		t.Fatalf("the recorded run's schedule has no %q: %q", want, recorded.Schedule)
	}
	q := pickerPlan()
	q.Schedule = recorded.Schedule
	setPicks("b", "a")
	tr := run(t, q)
	if tr.Diverged || tr.Attempts != 2 || len(tr.Divergences) != 1 {
		t.Fatalf("diverged %v after %d attempts, divergences %q; want followed in attempt 2 after one divergence", tr.Diverged, tr.Attempts, tr.Divergences)
	}
	d := tr.Divergences[0]
	if !sim.IsSubjectOrderDivergence(d) || sim.IsMapOrderDivergence(d) {
		t.Errorf("the divergence is not told as the subject's own choice of object (subject order %v, map order %v): %q", sim.IsSubjectOrderDivergence(d), sim.IsMapOrderDivergence(d), d)
	}
	if !strings.Contains(d, want) || !strings.Contains(d, "configmaps/default/b") {
		t.Errorf("the divergence does not name the wanted request and the object asked about instead: %q", d)
	}
	if diff := sim.DiffDeliverySchedules(recorded.Schedule, tr.Schedule); diff != "" {
		t.Errorf("the replay did not follow the recorded run: %s", diff)
	}

	// A subject that never picks the recorded object again: the replay
	// goes on in the canonical order and its trace says where and why.
	defer func(n int) { sim.ReplayAttempts = n }(sim.ReplayAttempts)
	sim.ReplayAttempts = 3
	setPicks("b", "b", "b")
	tr = run(t, q)
	if !tr.Diverged || tr.Attempts != 3 || len(tr.Divergences) != 3 {
		t.Fatalf("diverged %v after %d attempts, divergences %q; want diverged after 3", tr.Diverged, tr.Attempts, tr.Divergences)
	}
	for _, d := range tr.Divergences {
		if !sim.IsSubjectOrderDivergence(d) {
			t.Errorf("not told as the subject's own order: %q", d)
		}
	}
	if notes := find(tr, func(r sim.Record) bool {
		return r.Kind == sim.RecNote && strings.Contains(r.Detail, "could not follow") && sim.IsSubjectOrderDivergence(r.Detail)
	}); len(notes) != 1 {
		t.Errorf("%d notes say the run could not follow its schedule because of the subject's order, want 1", len(notes))
	}
}

// A divergence that no choice of the subject's explains is not told as
// one: the schedule names a request to a resource the subject never reads;
// or the client that asked about another object is one of the lab's own
// actors (the competitor), whose order the lab decides.
func TestADivergenceOnAnotherResourceIsNotTheSubjectsOrder(t *testing.T) {
	registerPicker()
	defer func(n int) { sim.ReplayAttempts = n }(sim.ReplayAttempts)
	sim.ReplayAttempts = 2
	setPicks("a")
	recorded := run(t, pickerPlan())
	q := pickerPlan()
	for _, e := range recorded.Schedule {
		q.Schedule = append(q.Schedule, strings.Replace(e, "get configmaps/default/a", "get secrets/default/a", 1))
	}
	setPicks("a", "a")
	tr := run(t, q)
	if !tr.Diverged {
		t.Fatalf("followed a schedule naming a request the subject never makes: %q", tr.Schedule)
	}
	for _, d := range tr.Divergences {
		if sim.IsSubjectOrderDivergence(d) || sim.IsMapOrderDivergence(d) {
			t.Errorf("told as the subject's or client-go's order: %q", d)
		}
	}
}

func TestADivergenceOfTheLabsOwnActorIsNotTheSubjectsOrder(t *testing.T) {
	registerPicker()
	defer func(n int) { sim.ReplayAttempts = n }(sim.ReplayAttempts)
	sim.ReplayAttempts = 2
	p := func() *sim.Plan { q := pickerPlan(); q.Subject = sim.ClientCompetitor; return q }
	setPicks("a")
	recorded := run(t, p())
	want := "req competitor get configmaps/default/a #1"
	if !slices.Contains(recorded.Schedule, want) {
		t.Fatalf("the recorded run's schedule has no %q: %q", want, recorded.Schedule)
	}
	q := p()
	q.Schedule = recorded.Schedule
	setPicks("b", "b")
	tr := run(t, q)
	if !tr.Diverged || len(tr.Divergences) != 2 {
		t.Fatalf("diverged %v, divergences %q; want diverged in both attempts", tr.Diverged, tr.Divergences)
	}
	for _, d := range tr.Divergences {
		if sim.IsSubjectOrderDivergence(d) {
			t.Errorf("the lab's own actor's order told as the subject's: %q", d)
		}
	}
}
