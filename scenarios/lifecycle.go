package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// LifecycleOf is what LifecyclePlan derived: the plan and, in words, what
// its lifecycle steps do.
type LifecycleOf struct {
	// Plan is the lifecycle workload: base's steps and the lifecycle's.
	Plan *sim.Plan
	// Steps says what each added step does, in plan order ("delete and
	// create again jobs default/a at 2.101s (1 s after the controller's
	// first write on it)").
	Steps []string
}

// LifecyclePlan derives a lifecycle workload from base, a workload (its
// user actions; a reference plan, ReferencePlan's), and ref, the trace of
// base's fault-free reference run, for any controller: it knows nothing of
// the subject's kinds but what ref records.
//
// The main objects are the objects another actor than the subject created
// (the user's, the plan's initial objects) that own, by a controller
// ownerReference, an object the subject created: its primaries. For each,
// the moment the reference shows the controller acting on it is its first
// write of the object or of a child of it. The workload adds:
//
//   - one second after the first main object's moment, a delete of one
//     child the subject made for it (sim.ChildRef: the child of the owner
//     as it is when the step plays, index 0);
//   - two seconds after each main object's moment, a delete of it and a
//     create under the same name from the user's own object (the plan's
//     initial object or create step: not the object as stored, whose
//     server-set fields name the predecessor): at the same time, or a
//     second later when the reference shows the object with finalizers
//     (it is gone only once they are removed).
//
// A step is left out when the reference shows the object already gone (or
// terminating) at its time. The targeted generators then perturb around
// these steps (a recreate hidden behind a relist, the child's delete
// learned as a tombstone, a crash across them). The lifecycle plan's name
// is base's with "-lifecycle". With no main object (the subject made
// nothing owned by another actor's object), or none alive at its times,
// it returns nil and why.
func LifecyclePlan(base *sim.Plan, ref *sim.Trace) (*LifecycleOf, string) {
	if base == nil || ref == nil {
		return nil, "no workload or no reference trace"
	}
	subject := base.Subject
	if ref.Plan != nil && ref.Plan.Subject != "" {
		subject = ref.Plan.Subject
	}
	type object struct {
		uid, resource, ns, name, kind, actor string
		created                              time.Duration
		gone                                 time.Duration // deleted or terminating (-1: never)
		finalizers                           bool          // its last write had finalizers
		act                                  time.Duration // the subject's first write on it or a child (-1: none)
		children                             []string      // resources of the children the subject made
	}
	objs := map[string]*object{}
	var order []string // main object candidates, by creation
	for _, r := range ref.Records {
		if r.Kind != sim.RecWrite || r.UID == "" {
			continue
		}
		o := objs[r.UID]
		if o == nil && r.Verb == "create" {
			o = &object{uid: r.UID, resource: r.Resource, ns: r.Namespace, name: r.Name, kind: kindOf(r.Object), actor: r.Actor,
				created: r.At.D(), gone: -1, act: -1}
			objs[r.UID] = o
			if r.Actor != subject {
				order = append(order, r.UID)
			}
		}
		if o != nil && o.gone < 0 && (r.EventType == "DELETED" || (r.Verb == "delete" && r.EventType == "MODIFIED")) {
			o.gone = r.At.D()
		}
		if o != nil && o.gone < 0 && len(r.Object) > 0 {
			o.finalizers = hasFinalizers(r.Object)
		}
		if r.Actor != subject {
			continue
		}
		// The subject's write: on a main object, or on a child of one.
		if o != nil && o.actor != subject && o.act < 0 {
			o.act = r.At.D()
		}
		if r.Owner != "" {
			if owner := objs[r.Owner]; owner != nil && owner.actor != subject {
				if owner.act < 0 {
					owner.act = r.At.D()
				}
				if r.Verb == "create" && !slices.Contains(owner.children, r.Resource) {
					owner.children = append(owner.children, r.Resource)
				}
			}
		}
	}
	var mains []*object
	for _, uid := range order {
		if o := objs[uid]; len(o.children) > 0 && o.act >= 0 {
			mains = append(mains, o)
		}
	}
	if len(mains) == 0 {
		return nil, "the reference shows no main object: the subject created nothing owned (controller ownerReference) by an object another actor made"
	}
	sort.SliceStable(mains, func(i, j int) bool { return mains[i].act < mains[j].act })
	alive := func(o *object, at time.Duration) bool { return o.gone < 0 || o.gone > at }
	p := base.Clone()
	p.Steps = slices.Clone(p.Steps)
	var added []sim.Step
	var what []string
	for _, o := range mains {
		at := o.act + time.Second
		if !alive(o, at) {
			continue
		}
		added = append(added, sim.Step{At: sim.Duration(at), Actor: "user", Op: "delete", Resource: o.children[0], Namespace: o.ns,
			Child: sim.ChildRef{Owner: o.resource, OwnerName: o.name}})
		what = append(what, fmt.Sprintf("delete one of the %s the controller made for %s %s/%s at %s (1 s after its first write on it)",
			o.children[0], o.resource, o.ns, o.name, sim.Duration(at)))
		break
	}
	for _, o := range mains {
		at := o.act + 2*time.Second
		if !alive(o, at) {
			continue
		}
		obj := userObject(base, o.kind, o.ns, o.name, o.created)
		if obj == nil {
			continue
		}
		// An object with finalizers is gone only once they are removed
		// (the controller's own, as a rule, in reaction to the delete):
		// its successor is created a second later. Without, at once.
		createAt, when := at, "at once"
		if o.finalizers {
			createAt, when = at+time.Second, "1 s later (it has finalizers)"
		}
		added = append(added,
			sim.Step{At: sim.Duration(at), Actor: "user", Op: "delete", Resource: o.resource, Namespace: o.ns, Name: o.name},
			sim.Step{At: sim.Duration(createAt), Actor: "user", Op: "create", Resource: o.resource, Object: obj})
		what = append(what, fmt.Sprintf("delete %s %s/%s at %s (2 s after the controller's first write on it) and create it again under the same name %s",
			o.resource, o.ns, o.name, sim.Duration(at), when))
	}
	if len(added) == 0 {
		return nil, "no main object is alive 1-2 s after the controller first acts on it in the reference"
	}
	p.Steps = append(p.Steps, added...)
	sort.SliceStable(p.Steps, func(i, j int) bool { return p.Steps[i].At < p.Steps[j].At })
	name := strings.TrimSuffix(base.Name, "-reference")
	if name == "" {
		name = "workload"
	}
	p.Name = name + "-lifecycle"
	return &LifecycleOf{Plan: p, Steps: what}, ""
}

// hasFinalizers reports whether an object's JSON has metadata.finalizers.
func hasFinalizers(obj json.RawMessage) bool {
	var m struct {
		Metadata struct {
			Finalizers []string `json:"finalizers"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(obj, &m)
	return len(m.Metadata.Finalizers) > 0
}

// kindOf reads an object's kind from its JSON ("" if none).
func kindOf(obj json.RawMessage) string {
	h, _ := headOf(obj)
	return h.Kind
}

// userObject returns the user's own JSON of the object of kind ns/name
// that a plan made at or before created: the last initial object or
// create step of a non-fault, non-controller actor that names it.
func userObject(p *sim.Plan, kind, ns, name string, created time.Duration) json.RawMessage {
	match := func(obj json.RawMessage) bool {
		h, ok := headOf(obj)
		if !ok {
			return false
		}
		objNS := h.Metadata.Namespace
		if objNS == "" && ns == "default" {
			objNS = ns
		}
		return h.Kind == kind && h.Metadata.Name == name && objNS == ns
	}
	var out json.RawMessage
	for _, o := range p.Objects {
		if match(o) {
			out = o
		}
	}
	for _, s := range p.Steps {
		if s.Op == "create" && s.Actor != sim.ActorFaults && s.Actor != "controller" && s.At.D() <= created && match(s.Object) {
			out = s.Object
		}
	}
	return slices.Clone(out)
}
