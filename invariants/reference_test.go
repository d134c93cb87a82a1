package invariants_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
	"github.com/cachelab/cachelab/sim"
)

// copierRun builds the trace of a run in which the user creates ConfigMap
// "a" and the controller keeps Secret "a" owned by it. uidPrefix makes
// the run's UIDs its own; extra adds writes before the controller's (the
// faulted run's retries), so resourceVersions differ too; status and
// spec are the Secret's.
func copierRun(t *testing.T, uidPrefix string, extra int, spec, status map[string]any, outcome string) *sim.Trace {
	t.Helper()
	b := tracebuild.New("ctrl")
	cm := b.Create("user", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a", UID: uidPrefix + "-cm",
		Spec: map[string]any{"n": "1"}})
	for i := 0; i < extra; i++ {
		b.Create("ctrl", tracebuild.Obj{Resource: "events", Namespace: "default", Name: "ev" + string(rune('0'+i))})
	}
	b.Create("ctrl", tracebuild.Obj{Resource: "secrets", Namespace: "default", Name: "a", UID: uidPrefix + "-secret",
		Owner: cm.UID, Spec: spec, Status: status})
	// An object nobody owns, of a resource the user creates none of: not
	// judged.
	b.Create("kubelet", tracebuild.Obj{Resource: "leases", Namespace: "default", Name: "l", UID: uidPrefix + "-lease",
		Spec: map[string]any{"holder": uidPrefix}})
	b.Final()
	return b.Trace(outcome)
}

func endState(t *testing.T, tr *sim.Trace) *invariants.EndState {
	t.Helper()
	es, err := invariants.EndStateOf(tr, invariants.ReferenceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestMatchesReferenceIgnoresWhatTwoRunsLegitimatelyDisagreeOn(t *testing.T) {
	ref := copierRun(t, "r", 0,
		map[string]any{"copyOf": "r-cm", "keys": []any{"x", "y"}},
		map[string]any{"syncedAt": "2026-01-01T00:00:01Z", "conditions": []any{
			map[string]any{"type": "A", "lastTransitionTime": "2026-01-01T00:00:01Z"},
			map[string]any{"type": "B", "lastTransitionTime": "2026-01-01T00:00:02Z"}}},
		"quiet")
	got := copierRun(t, "f", 3,
		map[string]any{"copyOf": "f-cm", "keys": []any{"y", "x"}},
		map[string]any{"syncedAt": "2026-01-01T00:07:00.5Z", "conditions": []any{
			map[string]any{"type": "B", "lastTransitionTime": "2026-01-01T00:09:02Z"},
			map[string]any{"type": "A", "lastTransitionTime": "2026-01-01T00:09:01Z"}}},
		"quiet")
	v := invariants.MatchesReference(got, endState(t, ref), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	if !strings.Contains(v.Reason, "2 objects") {
		t.Errorf("reason %q: want the ConfigMap and its Secret judged (2 objects), not the lease", v.Reason)
	}
}

func TestMatchesReferenceFailsWithADiffWhenAChildEndsDifferently(t *testing.T) {
	ref := copierRun(t, "r", 0, map[string]any{"n": "2"}, nil, "quiet")
	got := copierRun(t, "f", 1, map[string]any{"n": "1"}, nil, "quiet")
	v := invariants.MatchesReference(got, endState(t, ref), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "secrets/default/a") {
		t.Errorf("reason %q does not name the Secret", v.Reason)
	}
	for _, want := range []string{`-`, `"2"`, `+`, `"1"`, "- reference, + this run"} {
		if !strings.Contains(v.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, v.Detail)
		}
	}
	secret := -1
	for _, r := range got.Records {
		if r.Kind == sim.RecWrite && r.Resource == "secrets" {
			secret = r.Pos
		}
	}
	if v.Mark() != secret {
		t.Errorf("marked #%d, want the Secret's last write #%d", v.Mark(), secret)
	}
	t.Logf("%s\n%s", v.Reason, v.Detail)
}

func TestMatchesReferenceFailsWhenAChildIsMissing(t *testing.T) {
	ref := copierRun(t, "r", 0, map[string]any{"n": "1"}, nil, "quiet")
	b := tracebuild.New("ctrl")
	b.Create("user", tracebuild.Obj{Resource: "configmaps", Namespace: "default", Name: "a", Spec: map[string]any{"n": "1"}})
	b.Final()
	v := invariants.MatchesReference(b.Trace("quiet"), endState(t, ref), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "secrets/default/a (missing)") {
		t.Errorf("reason %q: want the Secret missing", v.Reason)
	}
}

func TestMatchesReferenceIsUnknownForARunThatDidNotSettle(t *testing.T) {
	ref := copierRun(t, "r", 0, map[string]any{"n": "2"}, nil, "quiet")
	got := copierRun(t, "f", 0, map[string]any{"n": "1"}, nil, "deadline")
	wantStatus(t, invariants.MatchesReference(got, endState(t, ref), invariants.ReferenceOptions{}), invariants.Unknown)
	unsettled := endState(t, copierRun(t, "r", 0, map[string]any{"n": "2"}, nil, "deadline"))
	wantStatus(t, invariants.MatchesReference(got, unsettled, invariants.ReferenceOptions{}), invariants.Unknown)
	wantStatus(t, invariants.MatchesReference(got, nil, invariants.ReferenceOptions{}), invariants.Unknown)
}

func TestMatchesReferenceIgnoresTheFieldsTheUserNames(t *testing.T) {
	ref := copierRun(t, "r", 0, map[string]any{"n": "1"}, map[string]any{"reconciles": 3}, "quiet")
	got := copierRun(t, "f", 0, map[string]any{"n": "1"}, map[string]any{"reconciles": 7}, "quiet")
	wantStatus(t, invariants.MatchesReference(got, endState(t, ref), invariants.ReferenceOptions{}), invariants.Fail)
	opts := invariants.ReferenceOptions{Ignore: []string{"status.reconciles"}}
	es, err := invariants.EndStateOf(ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, invariants.MatchesReference(got, es, opts), invariants.Pass)
}

// generatedPods builds a run whose controller made two Pods with generated
// names, the given suffixes, holding the given images.
func generatedPods(t *testing.T, suffixes [2]string, images [2]string) *sim.Trace {
	t.Helper()
	b := tracebuild.New("ctrl")
	owner := b.Create("user", tracebuild.Obj{Resource: "webs", Namespace: "default", Name: "web", UID: "owner-" + suffixes[0]})
	for i, s := range suffixes {
		obj := map[string]any{
			"metadata": map[string]any{"name": "web-" + s, "generateName": "web-", "namespace": "default", "uid": "pod-" + s,
				"ownerReferences": []any{map[string]any{"uid": owner.UID, "name": "web", "controller": true}}},
			"spec": map[string]any{"image": images[i]},
		}
		raw, _ := json.Marshal(obj)
		// Revisions of their own, past the builder's.
		b.Add(sim.Record{Kind: sim.RecWrite, Actor: "ctrl", Verb: "create", Resource: "pods", Namespace: "default",
			Name: "web-" + s, UID: "pod-" + s, RV: int64(1000 + i), Object: raw})
	}
	final := b.Final()
	var pods []sim.ObjectState
	for _, r := range b.Trace("quiet").Records {
		if r.Kind == sim.RecWrite && r.Resource == "pods" {
			pods = append(pods, sim.ObjectState{Resource: "pods", Namespace: "default", Name: r.Name, UID: r.UID, RV: r.RV, Owner: owner.UID})
		}
	}
	tr := b.Trace("quiet")
	tr.Records[final.Pos].Objects = append(tr.Records[final.Pos].Objects, pods...)
	return tr
}

func TestMatchesReferenceMatchesGeneratedNamesByContent(t *testing.T) {
	ref := generatedPods(t, [2]string{"abcde", "fghij"}, [2]string{"v1", "v2"})
	got := generatedPods(t, [2]string{"zzzzz", "aaaaa"}, [2]string{"v1", "v2"})
	wantStatus(t, invariants.MatchesReference(got, endState(t, ref), invariants.ReferenceOptions{}), invariants.Pass)
	bad := generatedPods(t, [2]string{"zzzzz", "aaaaa"}, [2]string{"v1", "v1"})
	v := invariants.MatchesReference(bad, endState(t, ref), invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if !strings.Contains(v.Reason, "pods/default/web-*") {
		t.Errorf("reason %q: want the generated Pod named by its prefix", v.Reason)
	}
}

// What two fault-free runs disagree on (a random token) is left out, and
// named; the rest is still compared.
func TestMatchesReferenceLeavesOutWhatTwoFaultFreeRunsDisagreeOn(t *testing.T) {
	ref := endState(t, copierRun(t, "r", 0, map[string]any{"n": "1", "token": "aaa"}, nil, "quiet"))
	again := endState(t, copierRun(t, "s", 0, map[string]any{"n": "1", "token": "bbb"}, nil, "quiet"))
	got := copierRun(t, "f", 1, map[string]any{"n": "1", "token": "ccc"}, nil, "quiet")
	wantStatus(t, invariants.MatchesReference(got, ref, invariants.ReferenceOptions{}), invariants.Fail)
	both := invariants.LeaveOutNondeterminism(ref, again)
	v := invariants.MatchesReference(got, both, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	if want := "left out: differs between two fault-free runs: secrets/default/a spec.token"; !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q: want %q", v.Reason, want)
	}
	if ref.Nondeterministic != nil {
		t.Error("LeaveOutNondeterminism changed its input")
	}
	wrong := copierRun(t, "f", 1, map[string]any{"n": "2", "token": "ccc"}, nil, "quiet")
	v = invariants.MatchesReference(wrong, both, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Fail)
	if strings.Contains(v.Detail, "token") || !strings.Contains(v.Detail, `"2"`) {
		t.Errorf("diff should show n and not the token:\n%s", v.Detail)
	}
}

// Each further fault-free run adds what it disagrees on with the first to
// what is left out, keeping what the earlier runs left out; a path every
// run agrees on stays compared.
func TestLeaveOutNondeterminismAddsWhatEachFurtherRunDisagreesOn(t *testing.T) {
	ref := endState(t, copierRun(t, "r", 0, map[string]any{"n": "1", "token": "aaa", "msg": "cpu"}, nil, "quiet"))
	second := endState(t, copierRun(t, "s", 0, map[string]any{"n": "1", "token": "bbb", "msg": "cpu"}, nil, "quiet"))
	third := endState(t, copierRun(t, "t", 0, map[string]any{"n": "1", "token": "aaa", "msg": "memory"}, nil, "quiet"))
	two := invariants.LeaveOutNondeterminism(ref, second)
	got := copierRun(t, "f", 1, map[string]any{"n": "1", "token": "ccc", "msg": "memory"}, nil, "quiet")
	wantStatus(t, invariants.MatchesReference(got, two, invariants.ReferenceOptions{}), invariants.Fail)
	three := invariants.LeaveOutNondeterminism(two, third)
	v := invariants.MatchesReference(got, three, invariants.ReferenceOptions{})
	wantStatus(t, v, invariants.Pass)
	if want := "left out: differs between two fault-free runs: secrets/default/a spec.msg, secrets/default/a spec.token"; !strings.Contains(v.Reason, want) {
		t.Errorf("reason %q: want %q", v.Reason, want)
	}
	if len(two.Nondeterministic["secrets/default/a"]) != 1 {
		t.Errorf("LeaveOutNondeterminism changed its input: %v", two.Nondeterministic)
	}
	wrong := copierRun(t, "f", 1, map[string]any{"n": "2", "token": "ccc", "msg": "memory"}, nil, "quiet")
	wantStatus(t, invariants.MatchesReference(wrong, three, invariants.ReferenceOptions{}), invariants.Fail)
}
