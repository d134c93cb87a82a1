package sim

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/clientmetrics"
)

// Subject is a controller (or cache) the sim drives. A subject is built fresh
// for every process start: a crash cancels the context given to Start and
// drops the subject, and a restart builds a new one from its factory, so no
// state (informers, caches, workqueue) survives a crash.
type Subject interface {
	// Start builds the subject's informers, caches and workers from env and
	// starts them. It returns once they are started (not synced). Every
	// goroutine it starts must return after ctx is cancelled.
	Start(ctx context.Context, env Env) error
}

// Converger is implemented by subjects that can say whether the server's
// state is what they want it to be ("desired == actual"). The sim asks after
// every server write and records each change as a RecDesired record.
type Converger interface {
	// Desired reports whether objs (the server's current state, every
	// resource, sorted by resource, namespace and name) is the subject's
	// desired state, and if not, why. objs is shared with the sim and must
	// not be modified. Desired is called with the server's lock held: it
	// must not call the server.
	Desired(objs []ServerObject) (ok bool, why string)
}

// ServerObject is one object of the server's state, for Converger.
type ServerObject struct {
	Resource schema.GroupVersionResource
	// Object is the object's JSON as stored.
	Object []byte
}

// Env is what a subject is given to run against: clients of the fake API
// server under the subject's own name, and a recorder for the trace.
type Env struct {
	// Name is the subject's actor name in the trace.
	Name string
	// Kube is a typed clientset talking to the fake server.
	Kube kubernetes.Interface
	// Dynamic is a dynamic client talking to the fake server.
	Dynamic dynamic.Interface
	// RESTConfig reaches the fake server over an in-memory pipe (no socket:
	// it works inside the run's bubble) through fakeapi/http's REST
	// handler, as the subject's own client: what a controller-runtime
	// manager, or any client built with NewForConfig, needs. Whatever the
	// plan's access path, its requests are traced as the subject's.
	RESTConfig *rest.Config
	// ListerWatcher returns a ListerWatcher (WatchList-capable) for one
	// resource, namespace "" meaning all namespaces.
	ListerWatcher func(gvr schema.GroupVersionResource, ns string) cache.ListerWatcherWithContext
	// Rec records what the subject does into the trace.
	Rec Recorder
	// Params are the plan's subject parameters (Plan.SubjectParams).
	Params map[string]string
	// Sleep, when set, waits d of virtual time in the run's turn order: use
	// it (rather than time.Sleep) for a deliberate delay of the subject's
	// own, such as a slow handler, so that its end is ordered with the
	// server's answers and events as they are, the same in every run of
	// the plan (a time.Sleep that ends at the instant a client-go timer
	// fires races it). name labels the delay in the run's schedule. It
	// returns early when ctx ends.
	Sleep func(ctx context.Context, name string, d time.Duration)
	// Turn, when set, waits for the run's turn before the subject does
	// what says, to object, and returns when it is given (or when ctx
	// ends). The recording wrappers call it before a handler call
	// ("handler pods", "ADDED default/a") and after a workqueue's Get
	// ("get", "default/a"), so that a worker and a handler woken by one
	// release run, and record, one at a time in the order the plan decides
	// (the canonical order of their names, or the plan's Schedule), the
	// same in every run. what names the turn in the run's schedule ("turn
	// <subject> <what> #n": the n-th such turn) and should say what the
	// turn is about, not which goroutine takes it (two workers of one
	// queue take the same turns), nor anything that follows client-go's
	// order (an object, an event type); object says that, and is written
	// beside the key ("... #n @ADDED default/a"), so that a replay knows
	// when client-go handed a batch out in another order than the recorded
	// run, while the keys stay the same. Outside the sim,
	// or in a run made without the scheduler, Turn is nil.
	Turn func(ctx context.Context, what, object string)
	// Metrics, when set, collects client-go's own metrics into the trace
	// (Trace.Metrics), in virtual time: give a workqueue
	// Metrics.Workqueue(Name) as its MetricsProvider (and a queue name),
	// an informer Metrics.Informer(Name) with an Identifier from
	// Metrics.InformerID, a SharedInformerFactory an InformerName from
	// Metrics.InformerName (see metrics.go for the routing).
	Metrics *clientmetrics.Collector
}

// Recorder records subject-side records into the trace. It stamps Pos, At and
// (when empty) Actor. It is safe for concurrent use.
type Recorder interface {
	Record(r Record)
	// Now returns the virtual time since the run started.
	Now() time.Duration
}

// SubjectFactory builds a fresh subject for one process start.
type SubjectFactory func() Subject

// SubjectInfo describes a registered subject.
type SubjectInfo struct {
	// Name is the registry name: "bellerophon", "bellerophon/no-expectations",
	// "naivecache", "legacy-deltafifo", ...
	Name string
	// Summary is one sentence for `cachelab list`.
	Summary string
	// Mutant is true for a subject that carries a deliberate, documented bug.
	Mutant bool
	// Source names the upstream issue or PR the bug comes from, for mutants.
	Source string
	// Resources are the custom resources the subject needs the server to
	// serve (registered before the run starts).
	CRDs []CRD
	New  SubjectFactory
	// Beside, optional, starts helper actors that run beside the subject
	// for the whole run, as the cluster around an operator does
	// (kube-controller-manager's controllers and garbage collector): once
	// per run, after the kubelet and before the subject's first process,
	// with clients named ClientBeside (a helper names its own clients from
	// env.RESTConfig with fakehttp.ConfigAs). The plan's crash steps do not
	// stop it; the run's end cancels ctx, and every goroutine it started
	// must return then. It returns once its actors are started; an error,
	// or not returning before the plan's deadline, fails the run. Its
	// writes are another writer's: the invariants judge the subject only.
	Beside func(ctx context.Context, env Env) error
	// ExternalGC makes the run's server leave ownerReference garbage
	// collection to a collector Beside runs (fakeapi.Options.ExternalGC):
	// a deleted owner's dependents go when the collector has seen the
	// delete, not in the same write. It needs Beside (a run without one is
	// an error).
	ExternalGC bool
	// SystemNamespaces makes every run start with the Namespaces
	// kube-apiserver creates at start-up (SystemNamespaces: default,
	// kube-system, kube-public, kube-node-lease), created by the setup
	// client before the plan's objects (one the plan creates itself is
	// not created twice): an operator that reads its objects' Namespace
	// finds it, as in a cluster. Off for the lab's own subjects, whose
	// recorded runs and resourceVersions predate it.
	SystemNamespaces bool
	// Webhooks, optional, gives the run's server admission webhooks
	// (admission.go): called once per run, before the plan's objects are
	// created, with clients named ClientWebhooks and a context carrying
	// the run's WebhookRouter; the configurations it returns route every
	// call through that router (their Transport is set by the run).
	Webhooks func(ctx context.Context, env Env) (fakeapi.Webhooks, error)
}

// CRD is a custom resource a subject needs served.
type CRD struct {
	GVR        schema.GroupVersionResource
	Kind       string
	ListKind   string
	Namespaced bool
	HasStatus  bool
	// Validate, optional, returns a reason per invalid field of the object
	// (its JSON); the server answers 422 Invalid.
	Validate func(obj map[string]any) []string
	// OpenAPIV3Schema, optional, is the CRD version's openAPIV3Schema: the
	// server then prunes, defaults and validates objects with
	// apiextensions-apiserver's code, as kube-apiserver does
	// (fakeapi.ResourceInfo.OpenAPIV3Schema); fakeapi.CRDResources reads
	// it from a manifest.
	OpenAPIV3Schema map[string]any
}

// CacheSnapshotter is implemented by subjects that expose caches (informer
// stores, a hand-made map). At the end of a run, once quiet and before the
// subject is stopped, the sim records one RecCache record per snapshot
// (Handler = the cache's name), for comparison with RecFinal.
type CacheSnapshotter interface {
	// SnapshotCaches returns one snapshot per cache. Use ObjectStateOf to
	// describe objects.
	SnapshotCaches() []CacheSnapshot
}

// CacheSnapshot is the content of one cache.
type CacheSnapshot struct {
	// Name names the cache ("pods informer", "naive map").
	Name string
	// Objects are the cached objects, in any order (the sim sorts them).
	Objects []ObjectState
}
