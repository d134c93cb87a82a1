package lab_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
)

// subjectReproduction is one subject's failing plans and their replays.
type subjectReproduction struct {
	plans []string // the failing plans' run IDs
	lab.Reproduction
}

// reproduction replays every failing plan among random plans
// first..first+plans-1 of each subject n times and returns the per-subject
// reproductions. A plan "fails" when an invariant of the subject fails
// (measurements excluded), as `cachelab run --random` counts it.
func reproduction(t *testing.T, subjects []string, first uint64, plans, n int) map[string]*subjectReproduction {
	t.Helper()
	host := lab.TestHost(t)
	out := map[string]*subjectReproduction{}
	for _, subject := range subjects {
		var jobs []lab.Job
		for seed := first; seed < first+uint64(plans); seed++ {
			p := scenarios.Random(seed, subject)
			jobs = append(jobs, lab.NewJob(&p, nil))
		}
		results, hostOut := lab.RunBatch(host, jobs, lab.Options{})
		if hostOut != "" {
			t.Fatalf("%s: %s", subject, hostOut)
		}
		rep := &subjectReproduction{}
		out[subject] = rep
		for _, r := range results {
			if r.Err != nil {
				t.Fatalf("%s: %v", r.Job.ID, r.Err)
			}
			if len(lab.FailedInvariants(r.Verdicts)) == 0 {
				continue
			}
			in := &lab.Input{Plan: r.Job.Plan, Recorded: r.Trace}
			one, _, err := lab.Reproduce(host, in, n)
			if err != nil {
				t.Fatal(err)
			}
			rep.plans = append(rep.plans, r.Job.ID)
			rep.Add(r.Job.ID, one)
		}
	}
	return out
}

// TestFailingRandomPlansReproduceWhenReplayed is the reproduction rate in
// make test: failing random plans of three mutants, each replayed 10 times;
// it fails under 99% of replays reproducing the failed set.
func TestFailingRandomPlansReproduceWhenReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("replays dozens of runs")
	}
	subjects := []string{"bellerophon/no-expectations", "bellerophon/no-uid-check", "bellerophon/stale-status"}
	reps := reproduction(t, subjects, 1, 8, 10)
	total := lab.Reproduction{}
	for _, s := range subjects {
		r := reps[s]
		t.Logf("%-30s %d failing plans, %d replays: failed set %d, fault schedule %d, delivery schedule %d", s, len(r.plans), r.Runs, r.SameFailed, r.SameFaults, r.SameDeliveries)
		total.Add(s, r.Reproduction)
		for _, d := range r.Differences {
			t.Log(d)
		}
	}
	if total.Runs < 30 {
		t.Fatalf("only %d replays of failing plans: too few to measure a rate", total.Runs)
	}
	if rate := total.Rate(); rate < 0.99 {
		t.Fatalf("%d/%d replays (%.1f%%) reproduced the failed set, want >= 99%%", total.SameFailed, total.Runs, 100*rate)
	}
}

// TestReproductionTable prints the table (make reproduction): every
// mutant, CACHELAB_REPRODUCTION random plans each (seeds 1..), every
// failing plan replayed 10 times.
func TestReproductionTable(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CACHELAB_REPRODUCTION"))
	if n <= 0 {
		t.Skip("set CACHELAB_REPRODUCTION=plans (make reproduction)")
	}
	// The six mutants of issue 16's table; CACHELAB_REPRODUCTION_ALL=1
	// takes every mutant.
	subjects := []string{"bellerophon/no-expectations", "bellerophon/no-uid-check", "bellerophon/stale-status",
		"bellerophon/timeout-as-failure", "bellerophon/informer-synced", "bellerophon/quiescence-synced"}
	if os.Getenv("CACHELAB_REPRODUCTION_ALL") != "" {
		subjects = nil
		for _, s := range sim.Subjects() {
			if s.Mutant && strings.HasPrefix(s.Name, "bellerophon/") {
				subjects = append(subjects, s.Name)
			}
		}
	}
	// CACHELAB_REPRODUCTION_SEED moves the plans to seeds the table has
	// not used (issue 31: measure on seeds not seen before).
	first := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("CACHELAB_REPRODUCTION_SEED"), 10, 64); err == nil && v > 0 {
		first = v
	}
	reps := reproduction(t, subjects, first, n, 10)
	var b strings.Builder
	fmt.Fprintf(&b, "| subject | failing plans (of %d, seeds %d..) | replays reproducing the failed set | same fault schedule | same delivery schedule | followed in the first attempt | no map order met: reproduced in the first attempt | attempts per replay (median, max) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n", n, first)
	var total lab.Reproduction
	plans := 0
	for _, s := range subjects {
		r := reps[s]
		plans += len(r.plans)
		total.Add(s, r.Reproduction)
		med, most := r.AttemptStats()
		fmt.Fprintf(&b, "| %s | %d | %d/%d | %d/%d | %d/%d | %d/%d | %d/%d | %d, %d |\n", s, len(r.plans), r.SameFailed, r.Runs, r.SameFaults, r.Runs, r.SameDeliveries, r.Runs, r.FirstAttempt, r.Runs, r.NoMapOrderFirst, r.NoMapOrder, med, most)
	}
	med, most := total.AttemptStats()
	fmt.Fprintf(&b, "| total | %d | **%d/%d (%.1f%%)** | %d/%d | %d/%d | %d/%d | %d/%d | %d, %d |\n", plans, total.SameFailed, total.Runs, 100*total.Rate(), total.SameFaults, total.Runs, total.SameDeliveries, total.Runs, total.FirstAttempt, total.Runs, total.NoMapOrderFirst, total.NoMapOrder, med, most)
	fmt.Fprintf(&b, "\n%d replays met client-go's map order and started over; %d diverged where the map order does not explain it\n", total.MapOrder, total.OtherDivergences)
	if total.NotFollowed > 0 {
		fmt.Fprintf(&b, "\n%d replays could not follow the recorded run in %d attempts\n", total.NotFollowed, sim.ReplayAttempts)
	}
	if total.Errors > 0 {
		fmt.Fprintf(&b, "\n%d replays could not run\n", total.Errors)
	}
	t.Log("\n" + b.String())
	for _, s := range subjects {
		for _, d := range reps[s].Differences {
			t.Log(d)
		}
	}
}

// threeBellerophons is a plan whose controller's WatchList of
// Bellerophons holds three objects: client-go hands them to the handler
// in Go's map order, which differs from run to run.
func threeBellerophons() *sim.Plan {
	var objs []json.RawMessage
	for _, n := range []string{"a", "b", "c"} {
		objs = append(objs, json.RawMessage(`{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"`+n+`","namespace":"default"},"spec":{"replicas":1,"version":"v1"}}`))
	}
	return &sim.Plan{Version: 1, Name: "three-bellerophons", Seed: 1, Subject: "bellerophon", Objects: objs, Steps: []sim.Step{},
		Kubelet: &sim.Kubelet{}}
}

// A replay follows the recorded run's whole delivery schedule, the order
// in which the handler got the WatchList's objects included (restarting
// while client-go hands them out in another order), and says how many
// attempts it took. Replayed in the canonical order instead, the three
// objects come in another order than the recorded run's in a share of the
// replays (a Go map of three iterates from the first of them in 6 cases of
// 8, the others in 1 of 8 each): 8 canonical replays all on the recorded
// schedule had a chance of at most (6/8)^8, 10%, measured 6/8 and 1/8.
func TestAReplayFollowsTheRecordedRunsOrder(t *testing.T) {
	host := lab.TestHost(t)
	p := threeBellerophons()
	results, out := lab.RunBatch(host, []lab.Job{lab.NewJob(p, nil)}, lab.Options{})
	if out != "" || results[0].Err != nil {
		t.Fatalf("%s %v", out, results[0].Err)
	}
	recorded := results[0].Trace
	if got := lab.FollowRecorded(p, recorded); len(got.Schedule) != len(recorded.Schedule) {
		t.Fatalf("FollowRecorded did not take the recorded schedule (%d of %d turns)", len(got.Schedule), len(recorded.Schedule))
	}
	const n = 8
	rep, _, err := lab.Reproduce(host, &lab.Input{Plan: p, Recorded: recorded}, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	if len(rep.Failed) > 0 {
		t.Fatalf("the correct controller failed %v on a fault-free plan", rep.Failed)
	}
	if rep.SameDeliveries != n || rep.NotFollowed != 0 || len(rep.Attempts) != n {
		t.Fatalf("want all %d replays on the recorded schedule: %s\n%s", n, rep, strings.Join(rep.Differences, "\n"))
	}
	// A trace written before runs recorded their attempts has no turns
	// of the subject in its schedule: its replays are canonical.
	old := *recorded
	old.Attempts = 0
	if got := lab.FollowRecorded(p, &old); len(got.Schedule) != 0 {
		t.Fatal("FollowRecorded followed a trace recorded before runs recorded attempts")
	}
}

// A plan written without steps (a random plan's "steps": null) is the plan
// its trace records (with "steps": []): its replays follow the recorded
// schedule. They did not: 13 of 40 random plans of seed 1 (random-5, -9,
// -11, ...) were replayed in the canonical order, without a word.
func TestAPlanWithoutStepsFollowsItsRecordedRun(t *testing.T) {
	host := lab.TestHost(t)
	p := threeBellerophons()
	p.Steps = nil
	results, out := lab.RunBatch(host, []lab.Job{lab.NewJob(p, nil)}, lab.Options{})
	if out != "" || results[0].Err != nil {
		t.Fatalf("%s %v", out, results[0].Err)
	}
	recorded := results[0].Trace
	if got := lab.FollowRecorded(p, recorded); len(got.Schedule) != len(recorded.Schedule) {
		t.Fatalf("FollowRecorded did not take the recorded schedule of a plan without steps (%d of %d turns)", len(got.Schedule), len(recorded.Schedule))
	}
	// Another plan's trace is still not followed.
	q := threeBellerophons()
	q.Seed = 2
	if got := lab.FollowRecorded(q, recorded); len(got.Schedule) != 0 {
		t.Fatal("FollowRecorded followed the trace of another plan")
	}
}

// A reproduction tells the replays that met client-go's map order (a
// handler got a batch in another order, the replay started over) from the
// others, whose first attempt is the lab's own order alone: of those it
// counts the ones that reproduced the failed set in their first attempt,
// and it counts apart a divergence that the map order does not explain.
func TestAReproductionTellsReplaysThatMetClientGosMapOrderFromTheOthers(t *testing.T) {
	recorded := &sim.Trace{Schedule: []string{"req x get pods #1"}, Attempts: 1}
	failed := []invariants.Verdict{{Invariant: "eventual-convergence", Status: invariants.Fail}}
	mapOrder := "attempt 1: at t=0s, turn 10: the schedule names \"turn x handler pods #1 @ADDED default/b\", but client-go handed out ADDED default/a before ADDED default/b (its order within a batch: Go's map order)"
	other := "attempt 1: at t=0s, turn 3: the schedule names \"req competitor patch pods/default/a #1\"; ready: req competitor patch pods/default/b #1"
	replays := []*sim.Trace{
		{Schedule: recorded.Schedule, Attempts: 1},                                            // followed at once
		{Schedule: recorded.Schedule, Attempts: 3, Divergences: []string{mapOrder, mapOrder}}, // started over twice
		{Schedule: recorded.Schedule, Attempts: 2, Divergences: []string{other}},              // the lab's own order differed
		{Schedule: recorded.Schedule, Attempts: 1},                                            // followed, another failed set
	}
	var rep lab.Reproduction
	for i, tr := range replays {
		vs := failed
		if i == 3 {
			vs = nil
		}
		rep.Compare(recorded, failed, &lab.Result{Trace: tr, Verdicts: vs})
	}
	if rep.MapOrder != 1 || rep.NoMapOrder != 3 || rep.NoMapOrderFirst != 1 || rep.OtherDivergences != 1 {
		t.Fatalf("map order %d, no map order %d (first attempt reproduced %d), other divergences %d; want 1, 3 (1), 1",
			rep.MapOrder, rep.NoMapOrder, rep.NoMapOrderFirst, rep.OtherDivergences)
	}
	if !sim.IsMapOrderDivergence(mapOrder) || sim.IsMapOrderDivergence(other) {
		t.Fatal("sim.IsMapOrderDivergence does not tell the two divergences apart")
	}
}

// A replay that started over because the subject chose another object to
// act on (sim.IsSubjectOrderDivergence: the upstream Job controller's Pods
// to delete come from its lister's Go map) is counted as such, not as a
// divergence the lab should have decided, and the summary says so.
func TestAReproductionCountsTheSubjectsOwnOrderApart(t *testing.T) {
	recorded := &sim.Trace{Schedule: []string{"req x get pods #1"}, Attempts: 1}
	failed := []invariants.Verdict{{Invariant: "matches-reference", Status: invariants.Fail}}
	subject := "attempt 1: at t=8s, turn 42: the schedule names \"req upstream/job patch pods/default/a-bbbbc #1\", but upstream/job asked about pods/default/a-bbbbd, pods/default/a-bbbbf instead (which object it acts on is its own order, decided inside it from the same answers and events: a lister's Go map order, a sort with ties; not the lab's)"
	if !sim.IsSubjectOrderDivergence(subject) {
		t.Fatalf("sim does not tell its own subject-order divergence: %q", subject)
	}
	var rep lab.Reproduction
	rep.Compare(recorded, failed, &lab.Result{Trace: &sim.Trace{Schedule: recorded.Schedule, Attempts: 4, Divergences: []string{subject, subject, subject}}, Verdicts: failed})
	rep.Compare(recorded, failed, &lab.Result{Trace: &sim.Trace{Schedule: recorded.Schedule, Attempts: 1}, Verdicts: failed})
	if rep.SubjectOrder != 1 || rep.OtherDivergences != 0 || rep.MapOrder != 0 || rep.NoMapOrder != 1 || rep.NoMapOrderFirst != 1 {
		t.Fatalf("subject order %d, other divergences %d, map order %d, neither %d (first attempt reproduced %d); want 1, 0, 0, 1 (1)",
			rep.SubjectOrder, rep.OtherDivergences, rep.MapOrder, rep.NoMapOrder, rep.NoMapOrderFirst)
	}
	if s := rep.String(); !strings.Contains(s, "1 replays met the subject's own order") {
		t.Errorf("the summary does not say a replay met the subject's own order: %s", s)
	}
}

// A run saved in a folder (a failing random plan's, by cachelabtest) is
// followed by the same plan drawn again, also when the saved run was
// itself a replay (its plan names the schedule it followed); another
// plan, a folder without a run, and a run that could not follow its own
// schedule are not followed.
func TestFollowSavedFollowsOnlyASavedRunOfTheSamePlan(t *testing.T) {
	host := lab.TestHost(t)
	p := threeBellerophons()
	results, out := lab.RunBatch(host, []lab.Job{lab.NewJob(p, nil)}, lab.Options{})
	if out != "" || results[0].Err != nil {
		t.Fatalf("%s %v", out, results[0].Err)
	}
	dir := t.TempDir()
	if err := lab.WriteTraceFile(filepath.Join(dir, lab.TraceFile), results[0].Trace); err != nil {
		t.Fatal(err)
	}
	saved := lab.ReadSavedRun(dir)
	if saved == nil || lab.ReadSavedRun(t.TempDir()) != nil {
		t.Fatal("ReadSavedRun did not read the saved run, or read one from an empty folder")
	}
	if got := lab.FollowSaved(threeBellerophons(), saved); !slices.Equal(got.Schedule, saved.Schedule) {
		t.Fatalf("the same plan did not follow its saved run (%d of %d turns)", len(got.Schedule), len(saved.Schedule))
	}
	replayed := *saved
	replayed.Plan = saved.Plan.Clone()
	replayed.Plan.Schedule = saved.Schedule
	if got := lab.FollowSaved(threeBellerophons(), &replayed); !slices.Equal(got.Schedule, saved.Schedule) {
		t.Fatal("the same plan did not follow a saved run that was a replay")
	}
	q := threeBellerophons()
	q.Seed = 2
	if got := lab.FollowSaved(q, saved); len(got.Schedule) != 0 {
		t.Fatal("another plan followed the saved run")
	}
	diverged := *saved
	diverged.Diverged = true
	if got := lab.FollowSaved(threeBellerophons(), &diverged); len(got.Schedule) != 0 {
		t.Fatal("a plan followed a saved run that could not follow its own schedule")
	}
}
