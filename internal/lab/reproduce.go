package lab

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// Reproduction is what replaying a recorded run N times gave: how many
// replays reproduced its failed invariants, its fault schedule and its
// delivery schedule, measured, not promised.
type Reproduction struct {
	// Runs is the number of replays.
	Runs int
	// Failed are the recorded run's failed invariants (measurements of the
	// sync definitions excluded), sorted.
	Failed []string
	// SameFailed counts replays whose failed invariants equal Failed.
	SameFailed int
	// SameFaults counts replays with the recorded fault schedule
	// (sim.DiffSchedules).
	SameFaults int
	// SameDeliveries counts replays with the recorded delivery schedule
	// (the order in which requests were answered and events delivered).
	// A trace recorded before delivery schedules were recorded has none:
	// then it is not compared and stays 0.
	SameDeliveries int
	// SameMeasurements counts replays whose sync-soundness measurements
	// equal the recorded run's: reported apart, since a measurement is not
	// a verdict.
	SameMeasurements int
	// Differences holds the first difference of each replay that did not
	// reproduce something (at most one line per replay).
	Differences []string
	// Errors counts replays that could not run.
	Errors int
	// Attempts holds, per replay, how many times it was started to follow
	// the recorded delivery schedule (sim.Trace.Attempts): a replay whose
	// handlers got a batch (a WatchList's objects, a relist's deletions)
	// in another Go map order than the recorded run's starts over.
	Attempts []int
	// FirstAttempt counts replays that followed the recorded run in their
	// first attempt.
	FirstAttempt int
	// NotFollowed counts replays that could not follow the recorded run
	// within sim.ReplayAttempts attempts (they went on in the canonical
	// order, and their traces say where they left it).
	NotFollowed int
	// MapOrder counts replays in which some attempt met client-go's map
	// order: a handler got a batch (a WatchList's objects, a relist's
	// deletions) in another order than the recorded run's
	// (sim.IsMapOrderDivergence), and the replay started over.
	MapOrder int
	// SubjectOrder counts replays in which some attempt met the subject's
	// own order: given the same answers and events, it chose another
	// object to act on than the recorded run did
	// (sim.IsSubjectOrderDivergence), and the replay started over.
	SubjectOrder int
	// NoMapOrder counts the other replays (that ran): no attempt met
	// client-go's map order nor the subject's own order, so the first
	// attempt is the lab's own order alone; NoMapOrderFirst counts those
	// of them that followed the recorded run in their first attempt and
	// reproduced the failed set.
	NoMapOrder, NoMapOrderFirst int
	// OtherDivergences counts replays with an attempt that could not follow
	// the recorded run for another reason than client-go's map order or
	// the subject's own order (an order the lab decides, which it did not
	// decide the same way).
	OtherDivergences int
	// RecordedVerdicts are the recorded run's verdicts as Reproduce
	// judged them to compare (RecordedVerdicts' doc in Reproduce): the
	// trace's invariants, and for a subject judged as Test judges it the
	// health verdicts and matches-reference. Add leaves them as they are.
	RecordedVerdicts []invariants.Verdict
}

// AttemptStats returns the median and the largest number of attempts per
// replay (0, 0 without replays).
func (r Reproduction) AttemptStats() (median, most int) {
	if len(r.Attempts) == 0 {
		return 0, 0
	}
	a := slices.Sorted(slices.Values(r.Attempts))
	return a[len(a)/2], a[len(a)-1]
}

// Reproduced reports whether every replay reproduced the failed set.
func (r Reproduction) Reproduced() bool { return r.Runs > 0 && r.SameFailed == r.Runs }

// Rate is the share of replays that reproduced the failed set.
func (r Reproduction) Rate() float64 {
	if r.Runs == 0 {
		return 0
	}
	return float64(r.SameFailed) / float64(r.Runs)
}

// String is a one-paragraph summary: "reproduced 10/10 (100%) ...".
func (r Reproduction) String() string {
	var b strings.Builder
	failed := "none"
	if len(r.Failed) > 0 {
		failed = strings.Join(r.Failed, ", ")
	}
	fmt.Fprintf(&b, "reproduced the failed set {%s} in %d/%d replays (%.0f%%); same fault schedule %d/%d; ",
		failed, r.SameFailed, r.Runs, 100*r.Rate(), r.SameFaults, r.Runs)
	if r.SameDeliveries > 0 || len(r.Differences) == 0 {
		fmt.Fprintf(&b, "same delivery schedule %d/%d; ", r.SameDeliveries, r.Runs)
	}
	fmt.Fprintf(&b, "same sync measurements %d/%d (measurements, not verdicts)", r.SameMeasurements, r.Runs)
	if len(r.Attempts) > 0 {
		med, most := r.AttemptStats()
		fmt.Fprintf(&b, "; followed the recorded run in the first attempt %d/%d, attempts per replay: median %d, max %d", r.FirstAttempt, r.Runs, med, most)
		if r.NotFollowed > 0 {
			fmt.Fprintf(&b, "; %d replays could not follow the recorded run in %d attempts", r.NotFollowed, sim.ReplayAttempts)
		}
		if r.SubjectOrder > 0 {
			fmt.Fprintf(&b, "; %d replays met the subject's own order (it chose other objects to act on than the recorded run, from the same answers and events; started over)", r.SubjectOrder)
		}
		fmt.Fprintf(&b, "; %d replays met client-go's map order (started over), of the other %d, %d reproduced the failed set in their first attempt", r.MapOrder, r.NoMapOrder, r.NoMapOrderFirst)
		if r.OtherDivergences > 0 {
			fmt.Fprintf(&b, "; %d replays diverged from the recorded run where neither client-go's map order nor the subject's own order explains it", r.OtherDivergences)
		}
	}
	if r.Errors > 0 {
		fmt.Fprintf(&b, "; %d replays could not run", r.Errors)
	}
	return b.String()
}

// Add adds o's replays to r, as a campaign totals the reproductions of its
// plans: the counts, and o's differences prefixed with label (the plan's
// name). r.Failed is left as it is.
func (r *Reproduction) Add(label string, o Reproduction) {
	r.Runs += o.Runs
	r.SameFailed += o.SameFailed
	r.SameFaults += o.SameFaults
	r.SameDeliveries += o.SameDeliveries
	r.SameMeasurements += o.SameMeasurements
	r.Errors += o.Errors
	r.Attempts = append(r.Attempts, o.Attempts...)
	r.FirstAttempt += o.FirstAttempt
	r.NotFollowed += o.NotFollowed
	r.MapOrder += o.MapOrder
	r.SubjectOrder += o.SubjectOrder
	r.NoMapOrder += o.NoMapOrder
	r.NoMapOrderFirst += o.NoMapOrderFirst
	r.OtherDivergences += o.OtherDivergences
	for _, d := range o.Differences {
		r.Differences = append(r.Differences, label+": "+d)
	}
}

// FailedInvariants returns the names of the failed verdicts that judge the
// subject (measurements excluded), sorted.
func FailedInvariants(vs []invariants.Verdict) []string {
	var out []string
	for _, v := range vs {
		if v.Status == invariants.Fail && !IsMeasurement(v.Invariant) {
			out = append(out, v.Invariant)
		}
	}
	slices.Sort(out)
	return out
}

// measurements returns the sync-soundness verdicts as "name=status".
func measurements(vs []invariants.Verdict) []string {
	var out []string
	for _, v := range vs {
		if IsMeasurement(v.Invariant) {
			out = append(out, v.Invariant+"="+string(v.Status))
		}
	}
	slices.Sort(out)
	return out
}

// Compare adds one replay's result to the reproduction of recorded
// (judged as recordedVerdicts).
func (r *Reproduction) Compare(recorded *sim.Trace, recordedVerdicts []invariants.Verdict, replay *Result) {
	r.Runs++
	if replay.Err != nil || replay.Trace == nil {
		r.Errors++
		r.Differences = append(r.Differences, fmt.Sprintf("replay %d: the run failed: %v", r.Runs, replay.Err))
		return
	}
	r.Failed = FailedInvariants(recordedVerdicts)
	var diff []string
	if n := replay.Trace.Attempts; n > 0 {
		r.Attempts = append(r.Attempts, n)
		switch {
		case replay.Trace.Diverged:
			r.NotFollowed++
			diff = append(diff, "could not follow the recorded run: "+replay.Trace.Divergences[len(replay.Trace.Divergences)-1])
		case n == 1:
			r.FirstAttempt++
		}
	}
	mapOrder, subjectOrder, other := false, false, false
	for _, d := range replay.Trace.Divergences {
		switch {
		case sim.IsMapOrderDivergence(d):
			mapOrder = true
		case sim.IsSubjectOrderDivergence(d):
			subjectOrder = true
		default:
			other = true
		}
	}
	if other {
		r.OtherDivergences++
	}
	if subjectOrder {
		r.SubjectOrder++
	}
	sameFailed := slices.Equal(FailedInvariants(replay.Verdicts), r.Failed)
	if mapOrder {
		r.MapOrder++
	}
	if !mapOrder && !subjectOrder {
		r.NoMapOrder++
		if sameFailed && replay.Trace.Attempts <= 1 && !replay.Trace.Diverged {
			r.NoMapOrderFirst++
		}
	}
	if got := FailedInvariants(replay.Verdicts); sameFailed {
		r.SameFailed++
	} else {
		diff = append(diff, fmt.Sprintf("failed {%s}, recorded {%s}", strings.Join(got, ", "), strings.Join(r.Failed, ", ")))
	}
	if d := sim.DiffSchedules(recorded, replay.Trace); d == "" {
		r.SameFaults++
	} else {
		diff = append(diff, strings.ReplaceAll(d, "\n", " "))
	}
	if len(recorded.Schedule) > 0 {
		if d := sim.DiffDeliverySchedules(recorded.Schedule, replay.Trace.Schedule); d == "" {
			r.SameDeliveries++
		} else {
			diff = append(diff, d)
		}
	}
	if slices.Equal(measurements(recordedVerdicts), measurements(replay.Verdicts)) {
		r.SameMeasurements++
	}
	if len(diff) > 0 {
		r.Differences = append(r.Differences, fmt.Sprintf("replay %d: %s", r.Runs, strings.Join(diff, "; ")))
	}
}

// Reproduce replays in.Plan n times under host, one at a time, and
// compares each replay with in.Recorded (which must be set). The replays
// write no files. Results are returned too, the last one first to keep.
//
// The replays are judged as the recorded run was (RecordedVerdicts): by
// the invariants, and for a subject judged as Test judges it
// (SetJudgedAsTest: cachelabtest's controllers) by the health verdicts
// and matches-reference too, against the fault-free reference runs,
// which the replays share. The recorded run's matches-reference is the
// one its verdicts.json beside the trace saved; without that file it is
// judged again here (the reference run is the replays', so it costs no
// run more).
func Reproduce(host Host, in *Input, n int) (Reproduction, []*Result, error) {
	if in.Recorded == nil {
		return Reproduction{}, nil, fmt.Errorf("no recorded run to compare with: give the trace.jsonl of a run (or a plan.json with its trace.jsonl beside it)")
	}
	if n < 1 {
		return Reproduction{}, nil, fmt.Errorf("--repeat %d: want at least 1 replay", n)
	}
	sc := MatchScenario(in.Plan)
	p := FollowRecorded(in.Plan, in.Recorded)
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = NewJob(p, sc)
		jobs[i].ID = fmt.Sprintf("%s/replay-%d", jobs[i].ID, i+1)
	}
	asTest := judgedAsTestFor(p.Subject)
	recordedVerdicts, savedRef := recordedVerdicts(in, asTest)
	var refs *ReferenceCache
	if asTest {
		refs = &ReferenceCache{}
	}
	results := make([]*Result, n)
	ok, hostOut := host(func(t *testing.T) {
		for i, job := range jobs {
			t.Run(job.ID, func(t *testing.T) { results[i] = runOne(t, job, refs) })
		}
		if asTest && !savedRef {
			// The recorded run's own matches-reference, judged as the
			// replays' were (its reference run is in refs by now).
			t.Run("recorded-run", func(t *testing.T) {
				r := &Result{Job: NewJob(in.Plan, nil), Trace: in.Recorded}
				JudgeReference(r, refs, invariants.ReferenceOptions{}, func(p *sim.Plan) (*sim.Trace, error) { return RunPlan(t, p) })
				recordedVerdicts = append(recordedVerdicts, r.Verdicts...)
			})
		}
	})
	for i, r := range results {
		if r == nil {
			results[i] = &Result{Job: jobs[i], Err: fmt.Errorf("the run did not finish (see the testing output)")}
		}
	}
	rep := Reproduction{RecordedVerdicts: recordedVerdicts}
	for _, res := range results {
		rep.Compare(in.Recorded, recordedVerdicts, res)
	}
	if !ok && hostOut != "" {
		return rep, results, fmt.Errorf("the testing framework reported failures:\n%s", hostOut)
	}
	return rep, results, nil
}

// recordedVerdicts returns the recorded run's verdicts as a replay of it
// is judged: its trace judged again by the invariants (checks are pure
// functions of the trace), and when asTest (a subject judged as Test
// judges it) by the health verdicts, plus the matches-reference verdict
// that the run's verdicts.json, beside its trace, saved. savedRef reports
// whether that file gave one (else the caller judges it again).
func recordedVerdicts(in *Input, asTest bool) (vs []invariants.Verdict, savedRef bool) {
	vs = CheckTrace(in.Recorded)
	if !asTest {
		return vs, false
	}
	vs = append(vs, HealthVerdicts(in.Recorded)...)
	if in.RecordedPath == "" {
		return vs, false
	}
	verdicts, err := ReadVerdicts(filepath.Join(filepath.Dir(in.RecordedPath), VerdictsFile))
	if err != nil {
		return vs, false
	}
	saved := false
	for _, v := range verdicts {
		if v.Invariant == invariants.NameMatchesReference {
			vs, saved = append(vs, v), true
		}
	}
	// A saved run of a plan without faults has no matches-reference (it
	// is its own reference): nothing to judge again either.
	if in.Recorded.Plan != nil {
		if _, faulty := ReferencePlanOf(in.Recorded); !faulty {
			saved = true
		}
	}
	return vs, saved
}

// ReadVerdicts reads the verdicts of a run's verdicts.json (WriteRun
// writes it beside the run's plan and trace). A file it cannot read gives
// the *fs.PathError; one that holds none, an error saying so.
func ReadVerdicts(path string) ([]invariants.Verdict, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var run struct {
		Verdicts []invariants.Verdict `json:"verdicts"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(run.Verdicts) == 0 {
		return nil, fmt.Errorf("%s holds no verdicts", path)
	}
	return run.Verdicts, nil
}

// DiffVerdicts lists the verdicts of now whose status differs from the
// same invariant's in recorded ("matches-reference: recorded fail,
// replayed pass"), and those of recorded that now lacks.
func DiffVerdicts(recorded, now []invariants.Verdict) []string {
	got := map[string]invariants.Status{}
	for _, v := range now {
		got[v.Invariant] = v.Status
	}
	var out []string
	for _, v := range recorded {
		g, ok := got[v.Invariant]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: recorded %s, not judged in the replay", v.Invariant, v.Status))
		case g != v.Status:
			out = append(out, fmt.Sprintf("%s: recorded %s, replayed %s", v.Invariant, v.Status, g))
		}
	}
	return out
}
