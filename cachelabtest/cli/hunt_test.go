package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/internal/lab"
)

// hunt refuses an unknown --order before anything runs.
func TestHuntRefusesAnUnknownOrder(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hunt", "--order", "bogus"}, "--order \"bogus\""},
	} {
		var stderr strings.Builder
		env := &Env{Stdout: io.Discard, Stderr: &stderr, Prog: "cachelab"}
		if code := Main(c.args, env); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr.String(), ExitUsage, c.want)
		}
	}
}

// --derive-lifecycle adds the lifecycle workload derived from the first
// workload's reference run (a delete and recreate of each main object, a
// child deleted), and says what it derived; without it nothing is derived.
func TestHuntDerivesALifecycleWorkloadOnlyWhenAsked(t *testing.T) {
	args := []string{"hunt", "--subject", "bellerophon", "--workloads", "1", "--seed", "2", "--lifecycle=false",
		"--class", "intermediate-state", "--shrink=false", "--out", "", "--parallel", "1"}
	code, stdout, stderr := run(t, append(args, "--derive-lifecycle")...)
	if code != ExitOK || !strings.Contains(stdout, "lifecycle: ") || !strings.Contains(stdout, "-lifecycle") {
		t.Errorf("--derive-lifecycle: exit %d, want %d and a 'lifecycle:' line naming the derived workload:\n%s%s", code, ExitOK, stdout, stderr)
	}
	code, stdout, stderr = run(t, args...)
	if code != ExitOK || strings.Contains(stdout, "lifecycle: ") {
		t.Errorf("without --derive-lifecycle: exit %d, want %d and no 'lifecycle:' line:\n%s%s", code, ExitOK, stdout, stderr)
	}
}

// hunt refuses a shard that is not one (3/2, no number, an Indexed Job's
// index without the shard count) and --random with --shard (every shard
// would run the same baseline), before anything runs.
func TestHuntRejectsABadShard(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--shard", "3/2"}, nil, "the shard index must be from 0 to 1"},
		{[]string{"--shard", "two"}, nil, "want i/n"},
		{nil, map[string]string{lab.EnvJobIndex: "1"}, lab.EnvShardCount + " (the number of shards"},
		{[]string{"--shard", "0/2", "--random", "5"}, nil, "--random with --shard"},
	} {
		var stderr strings.Builder
		env := &Env{Stdout: io.Discard, Stderr: &stderr, Prog: "cachelab", Getenv: func(k string) string { return c.env[k] }}
		if code := Main(append([]string{"hunt"}, c.args...), env); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("hunt %v (env %v): exit %d, %q; want %d and %q", c.args, c.env, code, stderr.String(), ExitUsage, c.want)
		}
	}
}

// oneObjectPlan is a workload of one Bellerophon scaled 1 -> 2: a single
// object, so every process's reference run is the same and generates the
// same plans.
const oneObjectPlan = `{"version":1,"name":"one-object","seed":7,"subject":"bellerophon",
"objects":[{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","metadata":{"name":"a","namespace":"default"},"spec":{"replicas":1,"version":"v1"}}],
"kubelet":{"readyAfter":"1s"},"faults":{"latency":{"kind":"fixed","max":"20ms"}},"deadline":"1m",
"steps":[{"at":"3s","actor":"user","op":"patch","resource":"bellerophons","namespace":"default","name":"a","patch":{"spec":{"replicas":2}}}]}`

// huntTable is a hunt's table from its column header to the line after it
// (the first lines count runs and CPU), its folders' names made alike.
func huntTable(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "\n#  ")
	j := strings.Index(out, "\ntargeted: ")
	if i < 0 || j < i {
		t.Fatalf("no table in:\n%s", out)
	}
	return regexp.MustCompile(`/s[0-9w]/`).ReplaceAllString(out[i+1:j], "/sX/")
}

// Two shards of a hunt, each a process of its own, generate the same plans
// (one digest), run their halves, and `cachelab merge` joins their folders
// into the whole campaign's table; a shard folder whose hunt.json names
// other plans (another digest) makes merge fail, saying which shards
// disagree, and a folder without hunt.json among hunt folders too.
func TestHuntShardsMergeIntoTheWholeCampaignsTable(t *testing.T) {
	root := t.TempDir()
	plan := filepath.Join(root, "one-object.json")
	if err := os.WriteFile(plan, []byte(oneObjectPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(out string, more ...string) []string {
		return append([]string{"hunt", plan, "--subject", "bellerophon/stale-status", "--shrink=false", "--parallel", "1", "--out", filepath.Join(root, out)}, more...)
	}
	code, whole, errs := run(t, args("sw")...)
	if code != ExitUnexpected || !strings.Contains(whole, "targeted: first failure at plan") {
		t.Fatalf("the whole campaign: exit %d, want %d (stale-status fails a plan):\n%s%s", code, ExitUnexpected, whole, errs)
	}
	var dirs []string
	for i := range 2 {
		code, out := runChild(t, nil, args(fmt.Sprint("s", i), "--shard", fmt.Sprintf("%d/2", i))...)
		if code != ExitOK && code != ExitUnexpected {
			t.Fatalf("shard %d/2: exit %d:\n%s", i, code, out)
		}
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^shard %d/2: 1[56] of the campaign's 31 plans`, i)).MatchString(out) {
			t.Errorf("shard %d/2 does not say which shard and how many plans it ran:\n%s", i, out)
		}
		dirs = append(dirs, filepath.Join(root, fmt.Sprint("s", i)))
	}
	code, merged, errs := run(t, append([]string{"merge", "--out", filepath.Join(root, "merged")}, dirs...)...)
	if code != ExitUnexpected || !strings.Contains(merged, "merged 2 shards of a hunt of bellerophon/stale-status: every shard generated the same 31 plans (digest ") {
		t.Fatalf("merge: exit %d, want %d and the shards' agreement:\n%s%s", code, ExitUnexpected, merged, errs)
	}
	if g, w := huntTable(t, merged), huntTable(t, whole); g != w {
		t.Errorf("the merged table differs from the whole campaign's:\n%s\nwant:\n%s", g, w)
	}
	if _, err := os.Stat(filepath.Join(root, "merged", lab.HuntFile)); err != nil {
		t.Errorf("merge wrote no %s: %v", lab.HuntFile, err)
	}

	// The plans written once (--plans-out) and the shards run from them
	// (--plans): the same table again.
	list := filepath.Join(root, "list")
	code, out, errs := run(t, "hunt", plan, "--subject", "bellerophon/stale-status", "--plans-out", list)
	if code != ExitOK || !strings.Contains(out, "31 targeted plans of bellerophon/stale-status (digest ") {
		t.Fatalf("--plans-out: exit %d:\n%s%s", code, out, errs)
	}
	var fromList []string
	for i := range 2 {
		dir := filepath.Join(root, fmt.Sprint("l", i))
		code, out := runChild(t, nil, "hunt", "--plans", list, "--shrink=false", "--parallel", "1", "--out", dir, "--shard", fmt.Sprintf("%d/2", i))
		if code != ExitOK && code != ExitUnexpected {
			t.Fatalf("shard %d/2 of the list: exit %d:\n%s", i, code, out)
		}
		fromList = append(fromList, dir)
	}
	code, mergedList, errs := run(t, append([]string{"merge", "--out", filepath.Join(root, "merged-list")}, fromList...)...)
	if code != ExitUnexpected || !strings.Contains(mergedList, "every shard generated the same 31 plans") {
		t.Fatalf("merge of the list's shards: exit %d:\n%s%s", code, mergedList, errs)
	}
	if g, w := huntTable(t, strings.ReplaceAll(mergedList, filepath.Join(root, "l"), filepath.Join(root, "s"))), huntTable(t, whole); g != w {
		t.Errorf("the table of the list's shards differs from the whole campaign's:\n%s\nwant:\n%s", g, w)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plans", list, plan}, "the list names its workloads"},
		{[]string{"--plans", list, "--class", "stale-state"}, "--class changes nothing"},
		{[]string{"--plans", list, "--subject", "bellerophon"}, "holds plans of bellerophon/stale-status, not bellerophon"},
		{[]string{"--plans", filepath.Join(root, "nope")}, "give the folder written by `cachelab hunt --plans-out DIR`"},
		{[]string{"--plans-out", list, "--shard", "0/2"}, "--plans-out runs no targeted plan"},
	} {
		code, out, errs := run(t, append([]string{"hunt"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("hunt %v: exit %d, %q%s; want %d and %q", c.args, code, errs, out, ExitUsage, c.want)
		}
	}

	// Shard 1 as if its reference had run in another order: another digest.
	path := filepath.Join(dirs[1], lab.HuntFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["digest"] = "0123456789abcdef"
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{dirs, "the shards disagree on the campaign's plans, not merged: 0/2 (" + dirs[0] + ") generated 31 plans"},
		{[]string{dirs[0], root}, "none: give the folders of one hunt's shards"},
	} {
		code, out, errs := run(t, append([]string{"merge", "--out", filepath.Join(root, "m2")}, c.dirs...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) || !strings.Contains(errs+out, "1/2") && c.dirs[1] == dirs[1] {
			t.Errorf("merge %v: exit %d, %q; want exit %d and %q", c.dirs, code, errs, ExitUsage, c.want)
		}
	}
}
