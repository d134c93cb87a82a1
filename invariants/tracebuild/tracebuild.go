// Package tracebuild builds sim.Traces by hand, record by record, for tests
// of invariants, reports and scenarios. A Builder keeps a small server of
// its own so that writes get increasing resourceVersions, UIDs and object
// JSON, and so that RecFinal and cache snapshots can be taken from it:
//
//	b := tracebuild.New("ctrl")
//	p := b.Create("user", tracebuild.Obj{Resource: "bellerophons", Name: "b", Replicas: tracebuild.Int(1)})
//	b.Handle("ctrl", "bellerophons", "ADDED", p)
//	b.Final()
//	tr := b.Trace("quiet")
//
// It is test support: it never validates what a real run would forbid, so
// that tests can build the broken traces invariants must reject.
package tracebuild

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// Obj is an object as the builder's server holds it.
type Obj struct {
	Resource, Namespace, Name string
	// APIVersion and Kind, optional, are written into the object.
	APIVersion, Kind string
	// UID is assigned by Create when empty.
	UID string
	// RV is assigned by every write.
	RV int64
	// Owner is the UID of the controller owner.
	Owner string
	// Replicas, when non-nil, is written as spec.replicas.
	Replicas *int64
	// Generation, when non-zero, is written as metadata.generation.
	Generation int64
	// Annotations are metadata.annotations.
	Annotations map[string]string
	// Labels are metadata.labels.
	Labels map[string]string
	// Finalizers are metadata.finalizers.
	Finalizers []string
	// Terminating sets metadata.deletionTimestamp.
	Terminating bool
	// GenerateName is metadata.generateName (a child named by the server,
	// one of interchangeable siblings).
	GenerateName string
	// Spec and Status are extra fields of spec and status.
	Spec, Status map[string]any
}

// Int returns a pointer to n, for Obj.Replicas.
func Int(n int64) *int64 { return &n }

func (o Obj) key() string { return o.Resource + "/" + o.Namespace + "/" + o.Name }

// JSON renders the object as a Kubernetes-shaped JSON document.
func (o Obj) JSON() json.RawMessage {
	md := map[string]any{"name": o.Name, "uid": o.UID, "resourceVersion": fmt.Sprint(o.RV)}
	if o.Namespace != "" {
		md["namespace"] = o.Namespace
	}
	if o.Owner != "" {
		md["ownerReferences"] = []any{map[string]any{"uid": o.Owner, "controller": true}}
	}
	if len(o.Finalizers) > 0 {
		md["finalizers"] = o.Finalizers
	}
	if o.GenerateName != "" {
		md["generateName"] = o.GenerateName
	}
	if o.Generation != 0 {
		md["generation"] = o.Generation
	}
	if len(o.Labels) > 0 {
		md["labels"] = o.Labels
	}
	if len(o.Annotations) > 0 {
		md["annotations"] = o.Annotations
	}
	if o.Terminating {
		md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	}
	doc := map[string]any{"metadata": md}
	if o.APIVersion != "" {
		doc["apiVersion"] = o.APIVersion
	}
	if o.Kind != "" {
		doc["kind"] = o.Kind
	}
	spec := map[string]any{}
	for k, v := range o.Spec {
		spec[k] = v
	}
	if o.Replicas != nil {
		spec["replicas"] = *o.Replicas
	}
	if len(spec) > 0 {
		doc["spec"] = spec
	}
	if len(o.Status) > 0 {
		doc["status"] = o.Status
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("tracebuild: object %s does not marshal: %v", o.key(), err))
	}
	return b
}

// State returns the object as a snapshot entry.
func (o Obj) State() sim.ObjectState {
	return sim.ObjectState{Resource: o.Resource, Namespace: o.Namespace, Name: o.Name, UID: o.UID, RV: o.RV,
		Terminating: o.Terminating, Finalizers: o.Finalizers, Owner: o.Owner}
}

// Builder appends records to a trace. Its zero value is not usable: call New.
type Builder struct {
	tr   sim.Trace
	now  time.Duration
	rv   int64
	nuid int
	live map[string]Obj
}

// New starts a trace whose Plan names subject (also the subject's actor
// name, by the invariants' conventions).
func New(subject string) *Builder {
	return &Builder{
		tr:   sim.Trace{Version: sim.TraceVersion, Plan: &sim.Plan{Version: sim.PlanVersion, Name: "hand-built", Subject: subject}},
		live: map[string]Obj{},
	}
}

// At moves the builder's clock to d (virtual time since the start); later
// records are stamped with it.
func (b *Builder) At(d time.Duration) *Builder {
	b.now = d
	return b
}

// Add appends r, stamping Pos and At, and returns it as appended.
func (b *Builder) Add(r sim.Record) sim.Record {
	r.Pos = len(b.tr.Records)
	r.At = sim.Duration(b.now)
	b.tr.Records = append(b.tr.Records, r)
	return r
}

// Last returns the position of the last record.
func (b *Builder) Last() int { return len(b.tr.Records) - 1 }

// Conditional marks the last record, an update, as sent with
// resourceVersion base (Record.BaseRV): the copy it was built from.
func (b *Builder) Conditional(base int64) {
	b.tr.Records[len(b.tr.Records)-1].BaseRV = base
}

// RV returns the server's current resourceVersion.
func (b *Builder) RV() int64 { return b.rv }

// Get returns the live object resource/ns/name (ok false if absent).
func (b *Builder) Get(resource, ns, name string) (Obj, bool) {
	o, ok := b.live[resource+"/"+ns+"/"+name]
	return o, ok
}

func (b *Builder) write(actor, verb string, o Obj, removes bool) Obj {
	b.rv++
	o.RV = b.rv
	if removes {
		delete(b.live, o.key())
	} else {
		b.live[o.key()] = o
	}
	b.Add(sim.Record{Kind: sim.RecWrite, Actor: actor, Verb: verb, Resource: o.Resource, Namespace: o.Namespace,
		Name: o.Name, UID: o.UID, RV: o.RV, Owner: o.Owner, Object: o.JSON(), ByGC: actor == "gc"})
	return o
}

// Create writes a new object (assigning its UID if empty) and returns it.
func (b *Builder) Create(actor string, o Obj) Obj {
	if o.UID == "" {
		b.nuid++
		o.UID = fmt.Sprintf("uid-%d", b.nuid)
	}
	return b.write(actor, "create", o, false)
}

// Update writes o (keyed by resource/namespace/name) with verb ("update",
// "patch", ...), keeping the live object's UID when o.UID is empty.
func (b *Builder) Update(actor, verb string, o Obj) Obj {
	if o.UID == "" {
		o.UID = b.live[o.key()].UID
	}
	return b.write(actor, verb, o, o.Terminating && len(o.Finalizers) == 0)
}

// Delete deletes the live object resource/ns/name: an object with
// finalizers is only marked terminating, others are removed. It returns
// the object as written.
func (b *Builder) Delete(actor, resource, ns, name string) Obj {
	o, ok := b.live[resource+"/"+ns+"/"+name]
	if !ok {
		panic(fmt.Sprintf("tracebuild: Delete of %s/%s/%s, which is not live", resource, ns, name))
	}
	if len(o.Finalizers) > 0 {
		o.Terminating = true
		return b.write(actor, "delete", o, false)
	}
	return b.write(actor, "delete", o, true)
}

// DeleteGracefully deletes the live object resource/ns/name as the store
// deletes a Pod with grace period 0 and no finalizer: two writes of one
// request, both verb "delete": the mark (deletionTimestamp set, a MODIFIED
// event) and the removal (a DELETED event). It returns both as written.
func (b *Builder) DeleteGracefully(actor, resource, ns, name string) (mark, gone Obj) {
	o, ok := b.live[resource+"/"+ns+"/"+name]
	if !ok {
		panic(fmt.Sprintf("tracebuild: DeleteGracefully of %s/%s/%s, which is not live", resource, ns, name))
	}
	o.Terminating = true
	mark = b.write(actor, "delete", o, false)
	return mark, b.write(actor, "delete", mark, true)
}

// RemoveByUpdate writes o (keyed by resource/namespace/name) as the store
// records an update that empties the finalizers of a terminating object:
// the write carries the object's last stored state (finalizers included)
// and the object is gone. Only a DELETED watch event (see Sent) shows it.
func (b *Builder) RemoveByUpdate(actor string, o Obj) Obj {
	if o.UID == "" {
		o.UID = b.live[o.key()].UID
	}
	return b.write(actor, "update", o, true)
}

// Sent records watch event eventType of o sent by the server to actor's
// watcher.
func (b *Builder) Sent(actor, watcher, eventType string, o Obj) sim.Record {
	return b.Add(event(sim.RecSent, actor, watcher, eventType, o))
}

func event(kind sim.RecordKind, actor, watcher, eventType string, o Obj) sim.Record {
	return sim.Record{Kind: kind, Actor: actor, Watcher: watcher, EventType: eventType, Resource: o.Resource,
		Namespace: o.Namespace, Name: o.Name, UID: o.UID, RV: o.RV}
}

// Deliver records watch event eventType of o delivered to actor's watcher.
func (b *Builder) Deliver(actor, watcher, eventType string, o Obj) sim.Record {
	return b.Add(event(sim.RecDelivered, actor, watcher, eventType, o))
}

// Handle records a handler call of eventType (ADDED, DELETED; MODIFIED
// with old == new) for o.
func (b *Builder) Handle(actor, handler, eventType string, o Obj) sim.Record {
	r := event(sim.RecHandler, actor, "", eventType, o)
	r.Handler = handler
	if eventType == "MODIFIED" {
		r.OldUID, r.OldRV = o.UID, o.RV
	}
	return b.Add(r)
}

// HandleInitial records an ADDED handler call marked isInInitialList.
func (b *Builder) HandleInitial(actor, handler string, o Obj) sim.Record {
	r := event(sim.RecHandler, actor, "", "ADDED", o)
	r.Handler, r.Initial = handler, true
	return b.Add(r)
}

// HandleUpdate records an update handler call from old to new.
func (b *Builder) HandleUpdate(actor, handler string, old, new Obj) sim.Record {
	r := event(sim.RecHandler, actor, "", "MODIFIED", new)
	r.Handler, r.OldUID, r.OldRV = handler, old.UID, old.RV
	return b.Add(r)
}

// Tombstone records a DeletedFinalStateUnknown delivered to a handler:
// keyed resource/ns/name, carrying obj (nil: no last known object).
func (b *Builder) Tombstone(actor, handler, resource, ns, name string, obj *Obj) sim.Record {
	r := sim.Record{Kind: sim.RecHandler, Actor: actor, Handler: handler, EventType: "DELETED", Tombstone: true,
		Resource: resource, Namespace: ns, Name: name}
	if obj != nil {
		r.UID, r.RV = obj.UID, obj.RV
	}
	return b.Add(r)
}

// Signal records a sync signal's new value; resource and handler scope it
// (either may be empty).
func (b *Builder) Signal(actor, signal string, value bool, resource, handler string) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecSignal, Actor: actor, Signal: signal, Value: value, Resource: resource, Handler: handler})
}

// Desired records the sim's desired == actual judgement.
func (b *Builder) Desired(actor string, value bool, why string) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecDesired, Actor: actor, Value: value, Detail: why})
}

// Cache records a snapshot of actor's cache name (of resource) holding objs.
func (b *Builder) Cache(actor, name, resource string, objs ...Obj) sim.Record {
	st := make([]sim.ObjectState, 0, len(objs))
	for _, o := range objs {
		st = append(st, o.State())
	}
	return b.Add(sim.Record{Kind: sim.RecCache, Actor: actor, Handler: name, Resource: resource, Objects: st})
}

// CacheOfServer records a snapshot of actor's cache name equal to the
// builder's live objects of resource.
func (b *Builder) CacheOfServer(actor, name, resource string) sim.Record {
	var objs []Obj
	for _, k := range b.keys() {
		if o := b.live[k]; o.Resource == resource {
			objs = append(objs, o)
		}
	}
	return b.Cache(actor, name, resource, objs...)
}

// List records a list by actor of resource served at the current RV
// (minus lag revisions).
func (b *Builder) List(actor, resource string, lag int64) sim.Record {
	n := 0
	for _, o := range b.live {
		if o.Resource == resource {
			n++
		}
	}
	return b.Add(sim.Record{Kind: sim.RecList, Actor: actor, Resource: resource, RV: b.rv - lag, Lag: lag, Count: n})
}

// WatchOpen records a watch opened by actor on resource.
func (b *Builder) WatchOpen(actor, watcher, resource string, watchList bool) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecWatchOpen, Actor: actor, Watcher: watcher, Resource: resource, RV: b.rv, WatchList: watchList})
}

// Request records a request answered with code.
func (b *Builder) Request(actor, verb, resource, ns, name string, code int) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecRequest, Actor: actor, Verb: verb, Resource: resource, Namespace: ns, Name: name, Code: code})
}

// Fault records an injected fault.
func (b *Builder) Fault(name string, contractBreaking bool) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecFault, Actor: "faults", Fault: name, ContractBreaking: contractBreaking})
}

// Crash records a crash of the subject actor.
func (b *Builder) Crash(actor string) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecCrash, Actor: actor})
}

// Restart records a restart of the subject actor.
func (b *Builder) Restart(actor string) sim.Record {
	return b.Add(sim.Record{Kind: sim.RecRestart, Actor: actor})
}

func (b *Builder) keys() []string {
	ks := make([]string, 0, len(b.live))
	for k := range b.live {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Final records the server's final state: the builder's live objects.
func (b *Builder) Final() sim.Record {
	st := make([]sim.ObjectState, 0, len(b.live))
	for _, k := range b.keys() {
		st = append(st, b.live[k].State())
	}
	return b.Add(sim.Record{Kind: sim.RecFinal, Objects: st})
}

// Trace returns the trace built so far, ended now with outcome ("quiet",
// "deadline", "error: ..."). The builder may go on appending.
func (b *Builder) Trace(outcome string) *sim.Trace {
	tr := b.tr
	tr.Records = append([]sim.Record(nil), b.tr.Records...)
	tr.End = sim.Duration(b.now)
	tr.Outcome = outcome
	return &tr
}
