package lab_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// oneObjectWorkload is one Bellerophon, scaled 1 -> 2: a single object, so
// no reference run's order is client-go's map order and every process
// generates the same plans.
func oneObjectWorkload(subject string) *sim.Plan {
	at := func(d time.Duration) sim.Duration { return sim.Duration(d) }
	return &sim.Plan{Version: sim.PlanVersion, Name: "one-object", Seed: 7, Subject: subject,
		Objects:  []json.RawMessage{json.RawMessage(`{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"a","namespace":"default"},"spec":{"replicas":1,"version":"v1"}}`)},
		Kubelet:  &sim.Kubelet{ReadyAfter: at(time.Second)},
		Faults:   sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(20 * time.Millisecond)}},
		Deadline: at(time.Minute),
		Steps: []sim.Step{
			{At: at(3 * time.Second), Actor: "user", Op: "patch", Resource: "bellerophons", Namespace: "default", Name: "a", Patch: json.RawMessage(`{"spec":{"replicas":2}}`)},
		}}
}

// tableRows is a campaign table from its column header on: the rows, the
// reasons and the pruned perturbations (the first lines count runs and CPU,
// which differ between a whole campaign and its merged shards).
func tableRows(t *testing.T, rep *lab.HuntReport) string {
	t.Helper()
	var b strings.Builder
	rep.WriteTable(&b)
	s := b.String()
	i := strings.Index(s, "\n#")
	if i < 0 {
		t.Fatalf("no table header in:\n%s", s)
	}
	return s[i+1:]
}

// A campaign's plans partition across its shards: every shard generates
// the same ordered plans (the same digest), runs the plans whose 1-based
// index k has (k-1) mod n == i, keeps k, and gets the verdict the whole
// campaign gets; the shards' hunt.json files merge into the whole
// campaign's table. The workload is one object, so the reference runs do
// not depend on client-go's map order and every run generates the same
// plans.
func TestHuntShardsPartitionTheCampaignAndMergeIntoItsTable(t *testing.T) {
	host := lab.TestHost(t)
	w := []*sim.Plan{oneObjectWorkload("bellerophon/stale-status")}
	whole, err := lab.HuntPlans(host, w, lab.HuntOptions{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Failures()) == 0 || len(whole.Failures()) == len(whole.Rows) {
		t.Fatalf("want a campaign with failing and passing plans, got %d of %d failed", len(whole.Failures()), len(whole.Rows))
	}
	want := map[int]string{}
	for _, r := range whole.Rows {
		want[r.Index] = r.Verdict + " " + strings.Join(r.Failed, ",")
	}
	const n = 3
	got := map[int]string{}
	var dirs []string
	for i := range n {
		s := lab.Shard{Index: i, Count: n}
		rep, err := lab.HuntPlans(host, w, lab.HuntOptions{Parallel: 1, Shard: s})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Digest != whole.Digest || rep.Generated != whole.Generated {
			t.Fatalf("shard %s generated %d plans (digest %s), the whole campaign %d (%s)", s, rep.Generated, rep.Digest, whole.Generated, whole.Digest)
		}
		if rep.ShardPlans != len(rep.Rows) || rep.ShardPlans != (whole.Generated-i+n-1)/n {
			t.Errorf("shard %s: %d plans, %d rows, want %d", s, rep.ShardPlans, len(rep.Rows), (whole.Generated-i+n-1)/n)
		}
		for _, r := range rep.Rows {
			if (r.Index-1)%n != i {
				t.Errorf("shard %s ran plan %d", s, r.Index)
			}
			if _, dup := got[r.Index]; dup {
				t.Errorf("plan %d ran in two shards", r.Index)
			}
			got[r.Index] = r.Verdict + " " + strings.Join(r.Failed, ",")
		}
		var b strings.Builder
		rep.WriteTable(&b)
		if first := strings.SplitN(b.String(), "\n", 2)[0]; !strings.HasPrefix(first, fmt.Sprintf("shard %s: %d of the campaign's %d plans", s, rep.ShardPlans, rep.Generated)) {
			t.Errorf("shard %s's table begins %q", s, first)
		}
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", i))
		if err := lab.WriteHunt(dir, rep); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	for k := 1; k <= whole.Generated; k++ {
		if got[k] != want[k] {
			t.Errorf("plan %d: %q in its shard, %q in the whole campaign", k, got[k], want[k])
		}
	}
	// The plans generated once (GenerateOnly), written and read back, and
	// each shard run from them: the same plans, verdicts and digest.
	gen, err := lab.HuntPlans(host, w, lab.HuntOptions{Parallel: 1, GenerateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if gen.PlanList == nil || len(gen.Rows) != 0 || gen.Digest != whole.Digest || len(gen.PlanList.Plans) != whole.Generated {
		t.Fatalf("generate only: list %v, %d rows, digest %s (want %s)", gen.PlanList != nil, len(gen.Rows), gen.Digest, whole.Digest)
	}
	listDir := t.TempDir()
	if err := lab.WritePlanList(listDir, gen.PlanList); err != nil {
		t.Fatal(err)
	}
	list, err := lab.LoadPlanList(listDir)
	if err != nil {
		t.Fatal(err)
	}
	fromList := map[int]string{}
	judging := 0
	for i := range 2 {
		rep, err := lab.HuntPlans(host, list.Workloads, lab.HuntOptions{Parallel: 1, Plans: list, Shard: lab.Shard{Index: i, Count: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Digest != whole.Digest {
			t.Errorf("shard %d/2 from the list: digest %s, want %s", i, rep.Digest, whole.Digest)
		}
		for _, r := range rep.Rows {
			fromList[r.Index] = r.Verdict + " " + strings.Join(r.Failed, ",")
		}
		judging += rep.JudgingRuns
	}
	// The plans read back judge as the generated ones: against the
	// workload's reference, served, unless their steps differ from it.
	if judging != whole.JudgingRuns {
		t.Errorf("the shards run from the list made %d judging runs, the whole campaign %d", judging, whole.JudgingRuns)
	}
	for k := 1; k <= whole.Generated; k++ {
		if fromList[k] != want[k] {
			t.Errorf("plan %d: %q in its shard run from the list, %q in the whole campaign", k, fromList[k], want[k])
		}
	}
	slices.Reverse(dirs) // the order of the folders does not matter
	merged, m, err := lab.MergeHunt(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Shards != n || m.Plans != whole.Generated || m.Digest != whole.Digest || m.Missing != 0 {
		t.Errorf("merge: %+v", m)
	}
	if g, w := tableRows(t, merged), tableRows(t, whole); g != w {
		t.Errorf("the merged table differs from the whole campaign's:\n%s\nwant:\n%s", g, w)
	}
}

// shardReport is a shard's report as HuntPlans returns it, without running
// anything: plans plans (digest digest), the rows of the indexes given,
// those in fail failing.
func shardReport(s lab.Shard, digest string, plans int, stopAtFirst bool, fail []int, idx ...int) *lab.HuntReport {
	rep := &lab.HuntReport{Subject: "bellerophon", Shard: s, Generated: plans, ShardPlans: len(idx), Digest: digest, StopAtFirst: stopAtFirst}
	for _, k := range idx {
		r := lab.HuntRow{Index: k, Class: "intermediate-state", Perturbation: fmt.Sprintf("crash %d", k), Verdict: "pass",
			Plan: &sim.Plan{Name: fmt.Sprintf("p%d", k), Subject: "bellerophon"}}
		if slices.Contains(fail, k) {
			r.Verdict, r.Failed = "fail", []string{"matches-reference"}
		}
		rep.Rows = append(rep.Rows, r)
	}
	return rep
}

// writeShards writes each report's hunt.json into a folder of its own and
// returns the folders.
func writeShards(t *testing.T, reps ...*lab.HuntReport) []string {
	t.Helper()
	var dirs []string
	for i, r := range reps {
		d := filepath.Join(t.TempDir(), fmt.Sprint("shard-", i))
		if err := lab.WriteHunt(d, r); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// MergeHunt joins shards that generated the same plans and refuses, saying
// why, anything else: shards whose plans differ (another digest, another
// count) are never merged; a folder without hunt.json, a missing shard, a
// plan no shard ran are errors. Shards that stopped at their first
// failure merge when every plan before the campaign's first failure ran.
func TestMergeHuntRefusesShardsThatDisagree(t *testing.T) {
	two := func(i int) lab.Shard { return lab.Shard{Index: i, Count: 2} }
	const d = "aaaaaaaaaaaaaaaaaaaa"
	for _, c := range []struct {
		name    string
		dirs    func(t *testing.T) []string
		want    string // "" merges
		rows    []int
		missing int
	}{
		{"same plans", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 4, false, nil, 1, 3), shardReport(two(1), d, 4, false, []int{2}, 2, 4))
		}, "", []int{1, 2, 3, 4}, 0},
		{"another digest", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 4, false, nil, 1, 3), shardReport(two(1), "bbbbbbbbbbbbbbbb", 4, false, nil, 2, 4))
		}, "the shards disagree on the campaign's plans, not merged: 0/2 (", nil, 0},
		{"another plan count", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 4, false, nil, 1, 3), shardReport(two(1), d, 5, false, nil, 2, 4))
		}, "generated 5 plans", nil, 0},
		{"a shard missing", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 4, false, nil, 1, 3))
		}, "missing shards 1/2", nil, 0},
		{"a plan not run", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 4, false, nil, 1), shardReport(two(1), d, 4, false, nil, 2, 4))
		}, "not run: 3", nil, 0},
		{"a row of another shard", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 4, false, nil, 1, 2, 3), shardReport(two(1), d, 4, false, nil, 4))
		}, "row 2 is not a plan of shard 0/2", nil, 0},
		{"a folder without hunt.json", func(t *testing.T) []string {
			return append(writeShards(t, shardReport(two(0), d, 4, false, nil, 1, 3)), t.TempDir())
		}, "hunt.json", nil, 0},
		{"stopped at the first failure", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 6, true, []int{3}, 1, 3), shardReport(two(1), d, 6, true, nil, 2, 4, 6))
		}, "", []int{1, 2, 3, 4, 6}, 1},
		{"stopped, a plan before the first failure not run", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 6, true, []int{5}, 1, 3, 5), shardReport(two(1), d, 6, true, []int{2}, 2))
		}, "", []int{1, 2, 3, 5}, 2},
		{"stopped, plans before the first failure lost", func(t *testing.T) []string {
			return writeShards(t, shardReport(two(0), d, 6, true, []int{5}, 1, 5), shardReport(two(1), d, 6, true, nil, 2, 4, 6))
		}, "not run: 3", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, m, err := lab.MergeHunt(c.dirs(t))
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var idx []int
			for _, r := range rep.Rows {
				idx = append(idx, r.Index)
			}
			if !slices.Equal(idx, c.rows) || m.Missing != c.missing || m.Shards != 2 || m.Digest != d {
				t.Errorf("rows %v, missing %d, merge %+v; want rows %v, missing %d", idx, m.Missing, m, c.rows, c.missing)
			}
		})
	}
}

// A plans list run with other references (another workload), or whose
// plans were changed after it was written, is refused with the reason; the
// list's own workloads run.
func TestHuntRefusesAPlansListOfOtherReferencesOrPlans(t *testing.T) {
	host := lab.TestHost(t)
	w := []*sim.Plan{oneObjectWorkload("bellerophon")}
	gen, err := lab.HuntPlans(host, w, lab.HuntOptions{Parallel: 1, GenerateOnly: true, Classes: []string{"intermediate-state"}})
	if err != nil {
		t.Fatal(err)
	}
	list := gen.PlanList
	if list == nil || len(list.Plans) == 0 {
		t.Fatalf("no plans generated")
	}
	other := oneObjectWorkload("bellerophon")
	other.Steps[0].At += sim.Duration(time.Second)
	changed := *list
	changed.Plans = slices.Clone(list.Plans)
	changed.Plans[0].Plan = list.Plans[0].Plan.Clone()
	changed.Plans[0].Plan.Deadline += sim.Duration(time.Second)
	for _, c := range []struct {
		name      string
		workloads []*sim.Plan
		list      *lab.HuntPlanList
		want      string
	}{
		{"the list's", list.Workloads, list, ""},
		{"another workload", []*sim.Plan{other}, list, "reference 1 (one-object-reference) is not the one the plans list was made from"},
		{"two workloads", []*sim.Plan{other, list.Workloads[0]}, list, "made from 1 reference runs, this campaign ran 2"},
		{"a changed plan", list.Workloads, &changed, "the file was changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := lab.HuntPlans(host, c.workloads, lab.HuntOptions{Parallel: 1, Plans: c.list, Shard: lab.Shard{Index: 0, Count: 2}})
			if c.want == "" {
				if err != nil || len(rep.Rows) != (len(list.Plans)+1)/2 {
					t.Fatalf("err %v, want the list's plans of shard 0/2 run", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one saying %q", err, c.want)
			}
		})
	}
}
