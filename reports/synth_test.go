package reports

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// synthRun builds a synthetic "standard" run of 30 virtual seconds: 50
// pods, 200 user operations, a subject with two informers (pods and
// configmaps) and a workqueue, a kubelet with its own watch, latency on
// every event, 3 disconnects each followed by a relist, a crash and a
// restart, and cache snapshots plus the final state at the end. It is
// shaped like a sim trace, not produced by sim: it exists to measure the
// report's size and speed, so only its volume and variety matter.
func synthRun() Run {
	rng := rand.New(rand.NewPCG(7, 7))
	const subject = "bellerophon"
	var recs []sim.Record
	now := time.Duration(0)
	add := func(r sim.Record) {
		r.Pos, r.At = len(recs), sim.Duration(now)
		recs = append(recs, r)
	}
	type obj struct {
		ns, name, uid string
		rv            int64
		alive         bool
	}
	var rv int64
	objs := make([]*obj, 50)
	for i := range objs {
		objs[i] = &obj{ns: "default", name: fmt.Sprintf("web-%02d", i)}
	}
	watchers := map[string]int{"pods": 1, "configmaps": 1}
	kubeletWatch := 1
	podJSONFull := func(o *obj) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q,"uid":%q,"resourceVersion":"%d","labels":{"app":"web","tier":"frontend"},"ownerReferences":[{"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon","name":"web","uid":"b-1","controller":true}]},"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":8080}]}]},"status":{"phase":"Running"}}`, o.name, o.ns, o.uid, o.rv))
	}
	deliver := func(actor, watcher, ev string, o *obj, initial bool) {
		add(sim.Record{Kind: sim.RecSent, Actor: actor, Watcher: watcher, EventType: ev, Resource: "pods", Namespace: o.ns, Name: o.name, UID: o.uid, RV: o.rv, Initial: initial})
		saved := now
		now += time.Duration(5+rng.IntN(45)) * time.Millisecond
		add(sim.Record{Kind: sim.RecDelivered, Actor: actor, Watcher: watcher, EventType: ev, Resource: "pods", Namespace: o.ns, Name: o.name, UID: o.uid, RV: o.rv, Initial: initial})
		if actor == subject {
			add(sim.Record{Kind: sim.RecHandler, Actor: actor, Handler: "pods", EventType: ev, Resource: "pods", Namespace: o.ns, Name: o.name, UID: o.uid, RV: o.rv, Initial: initial})
			key := o.ns + "/" + o.name
			add(sim.Record{Kind: sim.RecQueue, Actor: actor, Op: "add", Key: key})
			add(sim.Record{Kind: sim.RecQueue, Actor: actor, Op: "get", Key: key})
			if rng.IntN(10) == 0 {
				add(sim.Record{Kind: sim.RecReconcile, Actor: actor, Key: key, Result: "Operation cannot be fulfilled: the object has been modified", Detail: "conflict"})
				add(sim.Record{Kind: sim.RecQueue, Actor: actor, Op: "requeue", Key: key})
			} else {
				add(sim.Record{Kind: sim.RecReconcile, Actor: actor, Key: key, Result: "ok"})
				add(sim.Record{Kind: sim.RecQueue, Actor: actor, Op: "forget", Key: key})
			}
			add(sim.Record{Kind: sim.RecQueue, Actor: actor, Op: "done", Key: key})
		}
		now = saved
	}
	w := func(actor, res string, n int) string { return fmt.Sprintf("%s/%s#%d", actor, res, n) }
	relist := func() {
		add(sim.Record{Kind: sim.RecSignal, Actor: subject, Signal: "HasSynced", Value: false})
		add(sim.Record{Kind: sim.RecList, Actor: subject, Resource: "pods", RV: rv, Count: 50})
		add(sim.Record{Kind: sim.RecWatchOpen, Actor: subject, Watcher: w(subject, "pods", watchers["pods"]), Resource: "pods", RV: rv, WatchList: true})
		for _, o := range objs {
			if o.alive {
				deliver(subject, w(subject, "pods", watchers["pods"]), "ADDED", o, true)
			}
		}
		now += 60 * time.Millisecond
		add(sim.Record{Kind: sim.RecSignal, Actor: subject, Signal: "HasSynced", Value: true})
		add(sim.Record{Kind: sim.RecSignal, Actor: subject, Signal: "informer synced (v0.35 WatchList bookmark)", Value: true})
	}
	add(sim.Record{Kind: sim.RecWatchOpen, Actor: "kubelet", Watcher: w("kubelet", "pods", 1), Resource: "pods"})
	add(sim.Record{Kind: sim.RecList, Actor: subject, Resource: "configmaps", Count: 0})
	add(sim.Record{Kind: sim.RecWatchOpen, Actor: subject, Watcher: w(subject, "configmaps", 1), Resource: "configmaps"})
	relist()
	var steps []sim.Step
	disconnects := map[int]bool{50: true, 110: true, 170: true}
	for op := 0; op < 200; op++ {
		now = time.Duration(op)*145*time.Millisecond + 100*time.Millisecond
		o := objs[rng.IntN(len(objs))]
		verb := "update"
		switch {
		case !o.alive:
			verb = "create"
		case rng.IntN(5) == 0:
			verb = "delete"
		}
		steps = append(steps, sim.Step{At: sim.Duration(now), Actor: "user", Op: verb, Resource: "pods", Namespace: o.ns, Name: o.name})
		add(sim.Record{Kind: sim.RecStep, Actor: "user", Op: verb, Step: op, Detail: verb + " pods " + o.ns + "/" + o.name})
		code := map[string]int{"create": 201, "update": 200, "delete": 200}[verb]
		if rng.IntN(25) == 0 {
			add(sim.Record{Kind: sim.RecRequest, Actor: "user", Verb: verb, Resource: "pods", Namespace: o.ns, Name: o.name, Code: 429, Reason: "TooManyRequests", Fault: "fail-next"})
			now += 20 * time.Millisecond
		}
		add(sim.Record{Kind: sim.RecRequest, Actor: "user", Verb: verb, Resource: "pods", Namespace: o.ns, Name: o.name, Code: code})
		rv++
		if verb == "create" {
			o.uid = fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), rng.Uint64()&0xffffffffffff)
			o.alive = true
		}
		o.rv = rv
		ev := map[string]string{"create": "ADDED", "update": "MODIFIED", "delete": "DELETED"}[verb]
		add(sim.Record{Kind: sim.RecWrite, Actor: "user", Verb: verb, Resource: "pods", Namespace: o.ns, Name: o.name, UID: o.uid, RV: rv, Owner: "b-1", Object: podJSONFull(o)})
		if verb == "delete" {
			o.alive = false
		}
		deliver(subject, w(subject, "pods", watchers["pods"]), ev, o, false)
		deliver("kubelet", w("kubelet", "pods", kubeletWatch), ev, o, false)
		if verb != "delete" && rng.IntN(3) == 0 {
			now += 30 * time.Millisecond
			add(sim.Record{Kind: sim.RecRequest, Actor: subject, Verb: "update-status", Resource: "pods", Namespace: o.ns, Name: o.name, Code: 200})
			rv++
			o.rv = rv
			add(sim.Record{Kind: sim.RecWrite, Actor: subject, Verb: "update-status", Resource: "pods", Namespace: o.ns, Name: o.name, UID: o.uid, RV: rv, Owner: "b-1", Object: podJSONFull(o)})
			add(sim.Record{Kind: sim.RecDesired, Actor: subject, Value: rng.IntN(2) == 0})
		}
		if disconnects[op] {
			now += 50 * time.Millisecond
			steps = append(steps, sim.Step{At: sim.Duration(now), Actor: "faults", Op: "disconnect", Resource: "pods"})
			add(sim.Record{Kind: sim.RecFault, Actor: "faults", Fault: "disconnect", Watcher: w(subject, "pods", watchers["pods"]), Detail: "watch stream closed by the server"})
			add(sim.Record{Kind: sim.RecWatchClose, Actor: subject, Watcher: w(subject, "pods", watchers["pods"]), Reason: "fault: disconnect"})
			now += 800 * time.Millisecond
			watchers["pods"]++
			relist()
		}
		if op == 140 {
			add(sim.Record{Kind: sim.RecCrash, Actor: subject, Detail: "crash mid-reconcile"})
			now += 1500 * time.Millisecond
			add(sim.Record{Kind: sim.RecRestart, Actor: subject})
		}
	}
	now = 30 * time.Second
	var cache, final []sim.ObjectState
	stale := ""
	for _, o := range objs {
		if !o.alive {
			continue
		}
		st := sim.ObjectState{Resource: "pods", Namespace: o.ns, Name: o.name, UID: o.uid, RV: o.rv, Owner: "b-1"}
		final = append(final, st)
		if stale == "" {
			stale = o.name
			st.RV-- // one stale object, so that the report has a diff to show
		}
		cache = append(cache, st)
	}
	add(sim.Record{Kind: sim.RecCache, Actor: subject, Handler: "pods", Objects: cache})
	add(sim.Record{Kind: sim.RecFinal, Actor: "server", Objects: final})
	plan := &sim.Plan{Version: sim.PlanVersion, Name: "standard-30s", Seed: 7, Subject: subject, Steps: steps,
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "uniform", Min: sim.Duration(5 * time.Millisecond), Max: sim.Duration(50 * time.Millisecond)}}}
	n := len(recs)
	return Run{
		Plan:  plan,
		Trace: &sim.Trace{Version: sim.TraceVersion, Plan: plan, Records: recs, End: sim.Duration(now), Outcome: "quiet"},
		Verdicts: []invariants.Verdict{
			{Invariant: "convergence", Status: invariants.Fail, Reason: "the cache of bellerophon holds default/" + stale + " at an older revision than the server at the end", Positions: []int{n - 2, n - 1}},
			{Invariant: "per-object-order", Status: invariants.Pass, Reason: "every object's handler calls follow the server's revisions"},
			{Invariant: "no-duplicate-creates", Status: invariants.Pass, Reason: "no object was created twice"},
			{Invariant: "hassynced-sound", Status: invariants.Unknown, Reason: "HasSynced never flipped after the last relist"},
		},
		ReplayCommand: "cachelab replay out/standard-30s/bellerophon/plan.json",
	}
}
