package reports

import (
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

// laneKind is the kind of a timeline lane; it fixes the lane's place in its
// group, how the page draws it, and the help text shown for it.
type laneKind int

// The lane kinds, in their order within a group.
const (
	laneSteps laneKind = iota
	laneFaults
	laneWrites
	laneProcess
	laneRequests
	laneWatch
	laneHandler
	laneCache
	laneQueue
	laneReconcile
	laneSignal
	laneDesired
	laneNotes
	laneLog
)

// laneStyle is what the page needs to draw a lane kind: "marks" (ticks),
// "watch" (ticks over connection bands), "signal" (a step line) or
// "process" (up/down bands).
var laneStyle = map[laneKind]string{
	laneSteps: "marks", laneFaults: "marks", laneWrites: "marks",
	laneProcess: "process", laneRequests: "marks", laneWatch: "watch",
	laneHandler: "marks", laneCache: "marks", laneQueue: "marks",
	laneReconcile: "marks", laneSignal: "signal", laneDesired: "signal",
	laneNotes: "marks", laneLog: "marks",
}

// laneHelp explains each lane kind to a newcomer (tooltip and legend).
var laneHelp = map[laneKind]string{
	laneSteps:     "What the plan made happen, at its virtual time: API operations by actors, faults, crashes and restarts.",
	laneFaults:    "Faults injected into the run: disconnects, 410 Expired, request errors, stale lists. Magenta marks break the API's contract.",
	laneWrites:    "Every change the API server committed, with its resourceVersion: green create, blue update or patch, red delete, purple garbage collection, gray compaction.",
	laneProcess:   "The subject's process: a red cross is a crash, the hatched band the time it was down, a green mark the restart.",
	laneRequests:  "API requests this client made; orange and red marks are errors (409 Conflict, 429, 5xx, timeouts).",
	laneWatch:     "One informer's list and watch traffic. The light band is an open watch connection; hollow ticks are events the server sent, solid ticks events the client received, purple blocks are lists.",
	laneHandler:   "Event handler calls as the informer delivered them: green add, blue update, red delete. Hollow marks come from the initial list; ringed marks are deletes of a tombstone (DeletedFinalStateUnknown).",
	laneCache:     "Snapshots of a cache the subject keeps; click one to see its objects.",
	laneQueue:     "Workqueue operations: add, get, done, forget, and requeue (rate-limited retry) in orange.",
	laneReconcile: "Reconciles of one key: green succeeded, red returned an error.",
	laneSignal:    "A sync signal such as HasSynced: the line is high while it says true, low while false, dotted before it was first recorded.",
	laneDesired:   "Whether the server's state is what the subject wants (desired == actual): high when it is.",
	laneNotes:     "Anything else the subject wrote down.",
	laneLog:       "klog/logr lines the subject, or client-go working for it, logged (V <= 2): red marks are errors, such as \"Server rejected event\"; gray marks information, such as \"watch ended with error\".",
}

// lane is one row of the timeline.
type lane struct {
	Group string `json:"g"`
	Label string `json:"l"`
	Help  string `json:"h"`
	Style string `json:"s"`

	kind  laneKind
	group int // the group's rank
	first int // position of the lane's first record
}

// lanePlan assigns each record of a trace to a lane. lanes are sorted;
// of[i] is the lane index of record i, or -1.
type lanePlan struct {
	lanes []lane
	of    []int
}

// Group names of the lanes that do not belong to one client.
const (
	groupRun    = "run"
	groupServer = "API server"
)

// laneKey returns the group and the lane (kind, label) of record r, or
// ok=false when the record has no lane.
func laneKey(r *sim.Record) (group string, kind laneKind, label string, ok bool) {
	actor := r.Actor
	if actor == "" {
		actor = "unknown actor"
	}
	switch r.Kind {
	case sim.RecStep:
		return groupRun, laneSteps, "plan steps", true
	case sim.RecFault:
		return groupRun, laneFaults, "faults", true
	case sim.RecWrite, sim.RecCompact, sim.RecFinal:
		return groupServer, laneWrites, "writes", true
	case sim.RecCrash, sim.RecRestart:
		return actor, laneProcess, "process", true
	case sim.RecRequest:
		return actor, laneRequests, "requests", true
	case sim.RecList, sim.RecWatchOpen, sim.RecWatchClose, sim.RecSent, sim.RecDelivered:
		return actor, laneWatch, "watch " + watchLabel(r), true
	case sim.RecHandler:
		return actor, laneHandler, "handler " + nameOr(r.Handler, nameOr(r.Resource, "?")), true
	case sim.RecCache:
		return actor, laneCache, "cache " + nameOr(r.Handler, "?"), true
	case sim.RecQueue:
		return actor, laneQueue, "workqueue", true
	case sim.RecReconcile:
		return actor, laneReconcile, "reconciles", true
	case sim.RecSignal:
		return actor, laneSignal, nameOr(r.Signal, "signal"), true
	case sim.RecDesired:
		return actor, laneDesired, "desired == actual", true
	case sim.RecNote:
		return actor, laneNotes, "notes", true
	case sim.RecLog:
		return actor, laneLog, "log", true
	}
	return "", 0, "", false
}

// watchLabel names the informer a list/watch record belongs to: the
// watcher's name without its connection number and client prefix
// ("bellerophon/pods#3" -> "pods"), else the resource.
func watchLabel(r *sim.Record) string {
	if r.Watcher != "" {
		base, _, _ := strings.Cut(r.Watcher, "#")
		if rest, ok := strings.CutPrefix(base, r.Actor+"/"); ok && rest != "" {
			return rest
		}
		return base
	}
	return nameOr(shortResource(r.Resource), "?")
}

// shortResource drops the API group of a resource name
// ("bellerophons.lab.cachelab.dev" -> "bellerophons").
func shortResource(res string) string {
	s, _, _ := strings.Cut(res, ".")
	return s
}

// planLanes builds the lanes of a trace. Groups come in this order: run,
// API server, the subject (the actor named like the plan's subject), then
// the other actors in order of first appearance.
func planLanes(t *sim.Trace, subject string) lanePlan {
	subjectActor, _, _ := strings.Cut(subject, "/")
	groupRank := map[string]int{groupRun: 0, groupServer: 1}
	if subject != "" {
		groupRank[subject] = 2
		groupRank[subjectActor] = 2
	}
	next := 3
	type key struct {
		group string
		kind  laneKind
		label string
	}
	index := map[key]int{}
	lp := lanePlan{of: make([]int, len(t.Records))}
	for i := range t.Records {
		r := &t.Records[i]
		g, k, l, ok := laneKey(r)
		if !ok {
			lp.of[i] = -1
			continue
		}
		if _, seen := groupRank[g]; !seen {
			groupRank[g] = next
			next++
		}
		kk := key{g, k, l}
		li, seen := index[kk]
		if !seen {
			li = len(lp.lanes)
			index[kk] = li
			lp.lanes = append(lp.lanes, lane{Group: g, Label: l, Help: laneHelp[k], Style: laneStyle[k], kind: k, group: groupRank[g], first: i})
		}
		lp.of[i] = li
	}
	order := make([]int, len(lp.lanes))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		la, lb := lp.lanes[order[a]], lp.lanes[order[b]]
		if la.group != lb.group {
			return la.group < lb.group
		}
		if la.kind != lb.kind {
			return la.kind < lb.kind
		}
		if la.kind == laneWatch || la.kind == laneHandler || la.kind == laneSignal {
			return la.Label < lb.Label
		}
		return la.first < lb.first
	})
	renum := make([]int, len(order))
	sorted := make([]lane, len(order))
	for newi, oldi := range order {
		renum[oldi] = newi
		sorted[newi] = lp.lanes[oldi]
	}
	for i, li := range lp.of {
		if li >= 0 {
			lp.of[i] = renum[li]
		}
	}
	lp.lanes = sorted
	return lp
}
