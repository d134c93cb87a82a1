package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
)

// PlanGen returns a rapid generator of small random Plans for subject, for
// the property tests.
//
// A plan is a few independent episodes over two fixed object names, "a"
// and "b". An episode is one user action (create, scale, reconfigure,
// delete, delete a child, a competitor's write, a scale-up followed by a
// delete, a delete and recreate) wrapped in at most one fault (a watch
// hold, a hold ended by a 410, a write whose outcome is unknown, a failed
// request, a crash and restart, a broken or expired watch, a compaction),
// at a whole second of its own. Episodes neither read nor change what the
// others did: an action on an object that does not exist just fails (the
// trace notes it), and removing an episode leaves the others' times and
// meaning unchanged. That is what lets rapid shrink a failure to the one
// or two episodes that cause it, and makes the Plan a direct function of
// the drawn values: every draw is labelled ("action", "fault", "at-s",
// "hold-s", ...), so a shrunk failure reads as a story.
//
// Shrinking goes toward fewer episodes, no initial objects, action 0
// (none), fault 0 (none), the earliest second, the shortest holds, no
// latency and a fast handler. Faults with the most to find come with the
// higher weights (holds, crashes, unknown outcomes); only contract-keeping
// faults are drawn.
//
// For a subject that serves the Bellerophon CRD the objects are
// Bellerophons (with the kubelet actor making Pods Ready, and possibly a
// slow event handler); for any other subject they are ConfigMaps.
func PlanGen(subject string) *rapid.Generator[sim.Plan] {
	return PlanGenWith(subject, GenOptions{})
}

// GenOptions adapt PlanGen's ConfigMap plans to a subject that keeps
// another resource for each ConfigMap (a user's controller). The zero
// value is PlanGen's own.
type GenOptions struct {
	// ChildResource is the resource of the object the subject keeps for
	// each ConfigMap ("secrets"); default "configmaps". When set, the
	// faults that hit one resource (held watches, failed or timed-out
	// writes, slow relists) draw it as often as "configmaps", and child
	// deletes and competitor writes hit it.
	ChildResource string
	// ChildName names the child of ConfigMap name; default name + "-mirror".
	ChildName func(name string) string
}

// PlanGenWith is PlanGen for a subject described by o.
func PlanGenWith(subject string, o GenOptions) *rapid.Generator[sim.Plan] {
	bell := genServesBellerophon(subject)
	return rapid.Custom(func(t *rapid.T) sim.Plan {
		g := &planGen{t: t, bell: bell, subject: subject, opts: o}
		p := sim.Plan{
			Version:  sim.PlanVersion,
			Name:     "rapid",
			Seed:     rapid.Uint64Range(0, 1<<20).Draw(t, "seed"),
			Subject:  subject,
			Deadline: sim.Duration(3 * time.Minute),
			// The run ends after 45s without events: longer than the
			// longest retry delay of the subjects (Bellerophon's backoff
			// before recreating deleted children caps at 30s), so that a
			// run does not end "quiet" while a retry is due.
			Quiet: sim.Duration(45 * time.Second),
		}
		if bell {
			ready := rapid.SampledFrom([]int{1, 3}).Draw(t, "kubelet-ready-s")
			p.Kubelet = &sim.Kubelet{ReadyAfter: sim.Duration(time.Duration(ready) * time.Second)}
			if ms := rapid.SampledFrom([]int{0, 20, 50}).Draw(t, "handler-delay-ms"); ms > 0 {
				// A slow event handler (EDGE 1): the store is synced long
				// before the handler has seen every initial object.
				p.SubjectParams = map[string]string{"handlerDelay": fmt.Sprintf("%dms", ms)}
			}
		}
		g.faultPolicy(t, &p.Faults)
		if weighted(t, "competitor", []int{3, 1}) == 1 {
			// Another controller labels every object of the subject's
			// resource, a little after it sees it (EDGE 25): a foreign
			// write the subject's update filter rightly ignores, which its
			// next write from an older copy must not lose or trip over.
			p.Competitor = &sim.Competitor{Resource: g.resource(), Delay: g.ms("competitor-delay-ms", 0, 3000),
				Patch: mustJSON(map[string]any{"metadata": map[string]any{"labels": map[string]any{"owner": "competitor"}}})}
		}
		for i, name := range genNames {
			// "a" exists at the start more often than not: most bugs need
			// an object whose children exist before the episode.
			if weighted(t, name+"-at-start", []int{1, genNameWeights[i]}) == 1 {
				p.Objects = append(p.Objects, g.object(name))
			}
		}
		episodes := rapid.SliceOfN(rapid.Custom(g.episode), 0, genMaxEpisodes).Draw(t, "episodes")
		for _, e := range episodes {
			p.Steps = append(p.Steps, e...)
		}
		// Steps play in order of At (ties in list order); sorting only
		// makes the file read in time order.
		slices.SortStableFunc(p.Steps, func(a, b sim.Step) int { return int(a.At - b.At) })
		return p
	})
}

// genNames are the names of the objects a generated plan acts on, and
// genNameWeights how often an episode picks each ("b" is there for the
// bugs that need two objects: cross-object order, relists that find
// several changes).
var (
	genNames       = []string{"a", "b"}
	genNameWeights = []int{3, 1}
)

// genMaxEpisodes bounds the episodes of one generated plan.
const genMaxEpisodes = 4

// genActions are the user actions of an episode, simplest first (rapid
// shrinks toward 0). "delete-child" deletes the object's ConfigMap (the
// subject's child: a-config, or a-mirror); "competitor-*" are another
// writer's changes to the object (a label, or for Bellerophon a status
// condition of its own) or to its child (EDGE 25, 26); "scale-delete" is a
// scale-up followed at once by a delete (children of a terminating owner,
// EDGE 11); "recreate" deletes the object, strips its finalizers and
// creates it again, at one instant (EDGE 8).
var genActions = []weightedName{
	{"none", 1}, {"create", 2}, {"scale", 2}, {"reconfig", 1}, {"delete", 2}, {"delete-child", 3},
	{"competitor-label", 1}, {"competitor-child", 1}, {"competitor-status", 2}, {"scale-delete", 2}, {"recreate", 3},
}

// genFaults are the faults an episode wraps its action in, with their
// weights: "hold" holds the subject's watch deliveries of one resource for
// a few seconds (a lagging cache), "hold-expire" ends such a hold with a
// 410 (the held events are lost: the informer relists), "timeout" makes
// the subject's next write of a kind time out after it was applied (EDGE
// 28), "fail" fails it, "crash" crashes the subject before the action and
// restarts it (possibly with a slow relist of one resource).
var genFaults = []weightedName{
	{"none", 2}, {"hold", 3}, {"hold-expire", 4}, {"timeout", 4}, {"fail", 1}, {"crash", 4},
	{"break", 1}, {"expire", 2}, {"compact", 1},
}

// genServesBellerophon reports whether subject needs the Bellerophon CRD.
func genServesBellerophon(subject string) bool {
	info, ok := sim.LookupSubject(subject)
	if !ok {
		return false
	}
	for _, c := range info.CRDs {
		if c.Kind == "Bellerophon" {
			return true
		}
	}
	return false
}

// planGen holds what every draw of one PlanGen plan shares.
type planGen struct {
	t       *rapid.T
	bell    bool
	subject string
	opts    GenOptions
	// faultResources, for a schema plan (SchemaPlanGen), are the
	// resources its faults draw from: "" first, then the primaries'.
	faultResources []string
}

// childResource is the resource of the subject's children of ConfigMaps.
func (g *planGen) childResource() string {
	if g.bell || g.opts.ChildResource == "" {
		return "configmaps"
	}
	return g.opts.ChildResource
}

func (g *planGen) ms(label string, lo, hi int) sim.Duration {
	return sim.Duration(time.Duration(rapid.IntRange(lo, hi).Draw(g.t, label)) * time.Millisecond)
}

func (g *planGen) resource() string {
	if g.bell {
		return "bellerophons"
	}
	return "configmaps"
}

// pickResource draws one of the resources the subject watches ("" for all
// of them, first, when all is true); for Bellerophon, Pods (the children
// it counts) twice as often as the others.
func (g *planGen) pickResource(t *rapid.T, label string, all bool) string {
	if g.faultResources != nil {
		// A schema plan: "" (every resource, the children's whatever
		// their kind) or one primary resource, for reads and writes alike.
		w := make([]int, len(g.faultResources))
		for i := range w {
			w[i] = 1
		}
		return g.faultResources[weighted(t, label, w)]
	}
	res, w := []string{"", "configmaps"}, []int{1, 1}
	if c := g.childResource(); c != "configmaps" {
		res, w = []string{"", "configmaps", c}, []int{1, 1, 1}
	}
	if g.bell {
		res, w = []string{"", "pods", "bellerophons", "configmaps"}, []int{1, 2, 1, 1}
	}
	if !all {
		res, w = res[1:], w[1:]
	}
	return res[weighted(t, label, w)]
}

// child is the name of the ConfigMap the subject keeps for name.
func (g *planGen) child(name string) string {
	if g.bell {
		return name + "-config"
	}
	if g.opts.ChildName != nil {
		return g.opts.ChildName(name)
	}
	return name + "-mirror"
}

func (g *planGen) object(name string) json.RawMessage {
	var obj map[string]any
	if g.bell {
		obj = map[string]any{
			"apiVersion": "lab.cachelab.dev/v1alpha1", "kind": "Bellerophon",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec": map[string]any{
				"replicas": rapid.IntRange(0, 3).Draw(g.t, "replicas"),
				"version":  fmt.Sprintf("v%d", rapid.IntRange(1, 3).Draw(g.t, "version")),
			},
		}
	} else {
		obj = map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"data":     map[string]any{"n": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "data"))},
		}
	}
	return mustJSON(obj)
}

// weightedName is one entry of a table of named choices with weights.
type weightedName struct {
	name   string
	weight int
}

// pick draws a name from table, labelled label, as weighted draws it.
func pick(t *rapid.T, label string, table []weightedName) string {
	w := make([]int, len(table))
	for i, e := range table {
		w[i] = e.weight
	}
	return table[weighted(t, label, w)].name
}

// faultPolicy draws a plan's watch latency and request faults: the same
// draws, labelled and ordered the same, for every generator.
func (g *planGen) faultPolicy(t *rapid.T, f *sim.FaultPolicy) {
	switch weighted(t, "latency", []int{1, 2, 2}) {
	case 1:
		f.Latency = sim.Distribution{Kind: "fixed", Max: g.ms("latency-ms", 1, 1000)}
	case 2:
		f.Latency = sim.Distribution{Kind: "uniform", Max: g.ms("latency-max-ms", 1, 1000)}
	}
	switch weighted(t, "request-faults", []int{3, 1, 1}) {
	case 1:
		// Requests of the subject and the other actors (not the user's
		// steps) fail with 429, 500 or 503, until the last step.
		f.ErrorRate = float64(rapid.IntRange(5, 30).Draw(t, "error-percent")) / 100
	case 2:
		// Their writes are applied but answered 504 (EDGE 28).
		f.UnknownOutcomeRate = float64(rapid.IntRange(5, 30).Draw(t, "unknown-outcome-percent")) / 100
	}
}

// weighted draws an index of weights, each as likely as its weight; it
// shrinks toward index 0.
func weighted(t *rapid.T, label string, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := rapid.IntRange(0, total-1).Draw(t, label)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// episode draws one episode: a fault around an action, as steps.
func (g *planGen) episode(t *rapid.T) []sim.Step {
	g.t = t
	at := time.Duration(rapid.IntRange(1, 12).Draw(t, "at-s")) * time.Second
	fault := pick(t, "fault", genFaults)
	action := pick(t, "action", genActions)
	name := genNames[weighted(t, "name", genNameWeights)]

	before, after := g.faultSteps(t, fault, at)
	steps := append(before, g.action(action, name, at)...)
	return append(steps, after...)
}

// faultSteps draws the steps of fault around an action at time at: those
// before it, and those after.
func (g *planGen) faultSteps(t *rapid.T, fault string, at time.Duration) (before, after []sim.Step) {
	faultStep := func(op string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "faults", Op: op, Target: g.subject}
	}
	switch fault {
	case "hold", "hold-expire":
		hold := faultStep("hold")
		hold.Resource = g.pickResource(t, "hold-resource", true)
		hold.For = sim.Duration(time.Duration(rapid.IntRange(1, 8).Draw(t, "hold-s")) * time.Second)
		before = append(before, hold)
		if fault == "hold-expire" {
			// The 410 comes halfway through the hold, after the action: the
			// held events are dropped with the watch, and the relist is
			// held until the hold ends.
			expire := faultStep("expire")
			expire.Resource, expire.At = hold.Resource, hold.At+hold.For/2
			after = append(after, expire)
		}
	case "timeout", "fail":
		arm := faultStep("timeout-next-write")
		arm.Resource = g.pickResource(t, "write-resource", false)
		arm.Verb = []string{"create", "update", "patch", "delete"}[weighted(t, "write-verb", []int{2, 1, 1, 1})]
		if fault == "fail" {
			arm.Op = "fail-next"
			// Not 504: a timeout that was not applied leaves a correct
			// controller waiting for a create it cannot tell apart from one
			// that was (EDGE 28), until its expectations expire (5 min,
			// longer than the convergence bound).
			arm.Code = rapid.SampledFrom([]int{500, 503, 429}).Draw(t, "code")
		}
		before = append(before, arm)
	case "crash":
		before = append(before, sim.Step{At: sim.Duration(at), Actor: "controller", Op: "crash"})
		restartAt := sim.Duration(at) + g.ms("down-ms", 0, 3000)
		if rapid.Bool().Draw(t, "slow-relist") {
			// The restarted process lists one resource slowly (EDGE 4, 27).
			hold := sim.Step{At: restartAt, Actor: "faults", Op: "hold", Target: g.subject,
				Resource: g.pickResource(t, "relist-resource", false),
				For:      sim.Duration(time.Duration(rapid.IntRange(1, 5).Draw(t, "relist-hold-s")) * time.Second)}
			after = append(after, hold)
		}
		after = append(after, sim.Step{At: restartAt, Actor: "controller", Op: "restart"})
	case "break", "expire", "compact":
		st := faultStep(fault)
		if fault == "compact" {
			st.Target = ""
		}
		after = append(after, st)
	}
	return before, after
}

// action returns the steps of one user action on name at time at.
func (g *planGen) action(action, name string, at time.Duration) []sim.Step {
	user := func(op string) sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: op, Resource: g.resource(), Namespace: "default", Name: name}
	}
	patch := func(actor string, body map[string]any) sim.Step {
		st := user("patch")
		st.Actor, st.Patch = actor, mustJSON(body)
		return st
	}
	label := func() map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": fmt.Sprintf("t%d", rapid.IntRange(0, 3).Draw(g.t, "team"))}}}
	}
	create := func() sim.Step {
		return sim.Step{At: sim.Duration(at), Actor: "user", Op: "create", Object: g.object(name)}
	}
	switch action {
	case "create":
		return []sim.Step{create()}
	case "scale", "reconfig":
		var body map[string]any
		switch {
		case !g.bell:
			body = map[string]any{"data": map[string]any{"n": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "data"))}}
		case action == "scale":
			body = map[string]any{"spec": map[string]any{"replicas": rapid.IntRange(0, 4).Draw(g.t, "replicas")}}
		case rapid.Bool().Draw(g.t, "new-version"):
			body = map[string]any{"spec": map[string]any{"version": fmt.Sprintf("v%d", rapid.IntRange(1, 4).Draw(g.t, "version"))}}
		default:
			body = map[string]any{"spec": map[string]any{"config": map[string]any{"colour": fmt.Sprintf("c%d", rapid.IntRange(0, 3).Draw(g.t, "colour"))}}}
		}
		return []sim.Step{patch("user", body)}
	case "delete":
		return []sim.Step{user("delete")}
	case "delete-child":
		st := user("delete")
		st.Resource, st.Name = g.childResource(), g.child(name)
		return []sim.Step{st}
	case "competitor-label":
		return []sim.Step{patch("competitor", label())}
	case "competitor-child":
		st := patch("competitor", label())
		st.Resource, st.Name = g.childResource(), g.child(name)
		return []sim.Step{st}
	case "competitor-status":
		if !g.bell {
			return []sim.Step{patch("competitor", label())}
		}
		// Another controller sets a condition of its own in the status
		// (a whole-status replace at the current resourceVersion).
		obj := map[string]any{
			"apiVersion": "lab.cachelab.dev/v1alpha1", "kind": "Bellerophon",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"status": map[string]any{"conditions": []any{map[string]any{
				"type": "BackupVerified", "status": "True", "reason": "Checked",
				"message": "verified by the backup service", "lastTransitionTime": "2000-01-01T00:00:01Z",
			}}},
		}
		return []sim.Step{{At: sim.Duration(at), Actor: "competitor", Op: "update-status", Resource: g.resource(), Object: mustJSON(obj)}}
	case "scale-delete":
		body := map[string]any{"data": map[string]any{"n": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "data"))}}
		if g.bell {
			body = map[string]any{"spec": map[string]any{"replicas": rapid.IntRange(1, 4).Draw(g.t, "replicas")}}
		}
		del := user("delete")
		del.At += g.ms("delete-after-ms", 0, 100)
		return []sim.Step{patch("user", body), del}
	case "recreate":
		// A user deletes the object, finds it stuck terminating and strips
		// its finalizers (kubectl patch ... finalizers: null), then
		// creates it again under the same name.
		return []sim.Step{
			user("delete"),
			patch("user", map[string]any{"metadata": map[string]any{"finalizers": nil}}),
			create(),
		}
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("scenarios: generated JSON does not marshal: %v", err))
	}
	return b
}
