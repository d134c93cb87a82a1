package reports

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// The fixture is a small hand-made run: a naive watch-fed cache loses its
// watch at 2s, the user deletes web-1 at 2.5s while it is disconnected, and
// the cache re-watches from "now", so web-1 stays in the cache forever.
// Every number in it is written by hand; tests compare outputs with values
// read off this story, never with values computed by the package.

const (
	uidWeb1 = "0d3c5a1e-web1"
	uidWeb2 = "7f21b0c4-web2"
)

func podJSON(name, uid string, rv int64) json.RawMessage {
	return json.RawMessage(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name +
		`","namespace":"default","uid":"` + uid + `","resourceVersion":"` +
		itoa(rv) + `"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func at(ms int) sim.Duration { return sim.Duration(time.Duration(ms) * time.Millisecond) }

// fixturePlan is the plan of the fixture run.
func fixturePlan(subject string) *sim.Plan {
	return &sim.Plan{
		Version: sim.PlanVersion,
		Name:    "missed-delete-during-disconnect",
		Seed:    42,
		Subject: subject,
		Objects: []json.RawMessage{podJSON("web-1", "", 0)},
		Steps: []sim.Step{
			{At: at(1000), Actor: "user", Op: "create", Resource: "pods", Namespace: "default", Name: "web-2"},
			{At: at(2000), Actor: "faults", Op: "disconnect", Resource: "pods", Target: subject},
			{At: at(2500), Actor: "user", Op: "delete", Resource: "pods", Namespace: "default", Name: "web-1"},
		},
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: at(100)}},
	}
}

// fixtureTrace is the trace of the fixture run. Positions are the index
// in the list (stamped below), written in the comments for reference.
func fixtureTrace(subject string) *sim.Trace {
	const w = "naivecache/pods"
	recs := []sim.Record{
		/* 0 */ {At: at(0), Kind: sim.RecWrite, Actor: "user", Verb: "create", Resource: "pods", Namespace: "default", Name: "web-1", UID: uidWeb1, RV: 1, Object: podJSON("web-1", uidWeb1, 1)},
		/* 1 */ {At: at(0), Kind: sim.RecList, Actor: subject, Resource: "pods", RV: 1, Count: 1},
		/* 2 */ {At: at(0), Kind: sim.RecWatchOpen, Actor: subject, Watcher: w + "#1", Resource: "pods", RV: 1},
		/* 3 */ {At: at(0), Kind: sim.RecHandler, Actor: subject, Handler: "pods", EventType: "ADDED", Resource: "pods", Namespace: "default", Name: "web-1", UID: uidWeb1, RV: 1, Initial: true},
		/* 4 */ {At: at(10), Kind: sim.RecSignal, Actor: subject, Signal: "HasSynced", Value: true},
		/* 5 */ {At: at(1000), Kind: sim.RecStep, Actor: "user", Op: "create", Step: 0, Detail: "create pods default/web-2"},
		/* 6 */ {At: at(1000), Kind: sim.RecRequest, Actor: "user", Verb: "create", Resource: "pods", Namespace: "default", Name: "web-2", Code: 201},
		/* 7 */ {At: at(1000), Kind: sim.RecWrite, Actor: "user", Verb: "create", Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2, Object: podJSON("web-2", uidWeb2, 2)},
		/* 8 */ {At: at(1000), Kind: sim.RecSent, Actor: subject, Watcher: w + "#1", EventType: "ADDED", Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2},
		/* 9 */ {At: at(1100), Kind: sim.RecDelivered, Actor: subject, Watcher: w + "#1", EventType: "ADDED", Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2},
		/* 10 */ {At: at(1100), Kind: sim.RecHandler, Actor: subject, Handler: "pods", EventType: "ADDED", Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2},
		/* 11 */ {At: at(1100), Kind: sim.RecQueue, Actor: subject, Op: "add", Key: "default/web-2"},
		/* 12 */ {At: at(1100), Kind: sim.RecQueue, Actor: subject, Op: "get", Key: "default/web-2"},
		/* 13 */ {At: at(1100), Kind: sim.RecReconcile, Actor: subject, Key: "default/web-2", Result: "ok"},
		/* 14 */ {At: at(1100), Kind: sim.RecQueue, Actor: subject, Op: "done", Key: "default/web-2"},
		/* 15 */ {At: at(2000), Kind: sim.RecStep, Actor: "faults", Op: "disconnect", Step: 1, Detail: "disconnect pods watches of " + subject},
		/* 16 */ {At: at(2000), Kind: sim.RecFault, Actor: "faults", Fault: "disconnect", Watcher: w + "#1", Detail: "watch stream closed by the server"},
		/* 17 */ {At: at(2000), Kind: sim.RecWatchClose, Actor: subject, Watcher: w + "#1", Reason: "fault: disconnect"},
		/* 18 */ {At: at(2500), Kind: sim.RecStep, Actor: "user", Op: "delete", Step: 2, Detail: "delete pods default/web-1"},
		/* 19 */ {At: at(2500), Kind: sim.RecRequest, Actor: "user", Verb: "delete", Resource: "pods", Namespace: "default", Name: "web-1", Code: 200},
		/* 20 */ {At: at(2500), Kind: sim.RecWrite, Actor: "user", Verb: "delete", Resource: "pods", Namespace: "default", Name: "web-1", UID: uidWeb1, RV: 3, Object: podJSON("web-1", uidWeb1, 3)},
		/* 21 */ {At: at(3000), Kind: sim.RecWatchOpen, Actor: subject, Watcher: w + "#2", Resource: "pods", RV: 3, Detail: "re-watch from the newest revision"},
		/* 22 */ {At: at(5000), Kind: sim.RecCache, Actor: subject, Handler: "pods", Objects: []sim.ObjectState{
			{Resource: "pods", Namespace: "default", Name: "web-1", UID: uidWeb1, RV: 1},
			{Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2},
		}},
		/* 23 */ {At: at(5000), Kind: sim.RecFinal, Actor: "server", Objects: []sim.ObjectState{
			{Resource: "pods", Namespace: "default", Name: "web-2", UID: uidWeb2, RV: 2},
		}},
	}
	for i := range recs {
		recs[i].Pos = i
	}
	return &sim.Trace{Version: sim.TraceVersion, Plan: fixturePlan(subject), Records: recs, End: at(5000), Outcome: "quiet"}
}

// fixtureFailing is the fixture run: convergence fails, order passes, and
// the HasSynced check cannot decide.
func fixtureFailing() Run {
	return Run{
		Plan:  fixturePlan("naivecache"),
		Trace: fixtureTrace("naivecache"),
		Verdicts: []invariants.Verdict{
			{Invariant: "convergence", Status: invariants.Fail,
				Reason:    "the cache of naivecache still holds default/web-1, deleted from the server at #20",
				Positions: []int{22, 20, 23},
				Detail:    "cache pods at #22 vs server at #23:\n- default/web-1 uid=0d3c5a1e-web1 rv=1 (only in cache)"},
			{Invariant: "per-object-order", Status: invariants.Pass,
				Reason: "every object's handler calls follow the server's revisions"},
			{Invariant: "hassynced-sound", Status: invariants.Unknown,
				Reason:    `HasSynced "quiet for 10× loop" <never flipped back> & the run ended first`,
				Positions: []int{4}},
		},
		ReplayCommand: "cachelab replay out/missed-delete-during-disconnect/naivecache/plan.json",
	}
}

// fixturePassing is the same plan against a subject that passes.
func fixturePassing() Run {
	return Run{
		Plan:  fixturePlan("bellerophon"),
		Trace: fixtureTrace("bellerophon"),
		Verdicts: []invariants.Verdict{
			{Invariant: "convergence", Status: invariants.Pass, Reason: "every cache equals the server at the end"},
			{Invariant: "per-object-order", Status: invariants.Pass, Reason: "every object's handler calls follow the server's revisions"},
		},
		ReplayCommand: "cachelab replay out/missed-delete-during-disconnect/bellerophon/plan.json",
	}
}

// fixtureErrored is a run that failed before any invariant ran.
func fixtureErrored() Run {
	p := fixturePlan("legacy-deltafifo")
	p.Name = "broken-run"
	return Run{
		Plan:          p,
		Trace:         &sim.Trace{Version: sim.TraceVersion, Plan: p, End: at(0), Outcome: "error: subject legacy-deltafifo: Start: no such resource \"widgets\""},
		ReplayCommand: "cachelab replay out/broken-run/legacy-deltafifo/plan.json",
	}
}
