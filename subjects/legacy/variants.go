package legacy

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/internal/mirror"
)

// PoisonAnnotation marks a ConfigMap the panicking-handler variant cannot
// handle: its OnAdd panics on it (value "true").
const PoisonAnnotation = "lab.cachelab.dev/poison"

// The registry names of the RealFIFO variants: the same mirror controller
// on the same SharedIndexInformer, each changing one thing, to contrast
// with informer-realfifo in the scenarios of EDGE-CASES 2, 5, 10 and 21.
const (
	// PanickingHandlerName's OnAdd panics on a ConfigMap annotated
	// PoisonAnnotation, and the panic reaches client-go's processorListener
	// (EDGE-CASES 2, k/k#129024). With utilruntime.ReallyCrash=false the
	// listener logs it, skips the item, sleeps a second and goes on; the
	// item's isInInitialList accounting is never finished, so the
	// registration's HasSynced stays false and the workers never start.
	PanickingHandlerName = RealFIFOName + "/panicking-handler"
	// NoWatchListName opts out of WatchList: its ListerWatcher reports
	// IsWatchListSemanticsUnSupported, so the reflector LISTs, then
	// watches (as with fake clientsets; EDGE-CASES 5).
	NoWatchListName = RealFIFOName + "/no-watchlist"
	// ListWithoutRVName opts out of WatchList and its ListerWatcher's
	// lists carry no resourceVersion (as a hand-written ListerWatcher's
	// may), so the reflector watches from resourceVersion "": the watch
	// starts with synthetic ADDED events in key order, not RV order, and
	// the reflector does not resume from their RVs until a non-ADDED event
	// (EDGE-CASES 16, PR #136583).
	ListWithoutRVName = RealFIFOName + "/list-without-rv"
	// SourcesOnlyName ignores events of mirrors: it reconciles a source only
	// when the source's own event arrives, relying on the relist and the
	// resync to notice a mirror changed behind its back (as controllers
	// that do not watch what they create do; EDGE-CASES 10, 21).
	SourcesOnlyName = RealFIFOName + "/sources-only"
	// SkipsSameRVName is SourcesOnlyName with the `old.RV == new.RV`
	// idiom: an OnUpdate whose objects have the same resourceVersion is
	// dropped as "only a resync". It also drops a relist's unchanged
	// objects, the controller's only chance to repair a mirror deleted
	// while its watch was down (EDGE-CASES 10, 21: PR #86015).
	SkipsSameRVName = RealFIFOName + "/skips-same-rv"
	// IgnoresTooLargeName's ListerWatcher turns every 504 "Too large
	// resource version" into a bare 504 Timeout (no ResourceVersionTooLarge
	// cause, no telling message), so the v0.37.2 reflector cannot recognise
	// it (reflector.go isTooLargeResourceVersionError) and does what
	// reflectors did before PRs #92537 and #94316: back off and ask again
	// at the same resourceVersion, for as long as the replica lags
	// (EDGE-CASES 14, k/k#91073).
	IgnoresTooLargeName = RealFIFOName + "/ignores-too-large"
	// LastSyncRVName takes informer.LastSyncResourceVersion() != "" for
	// its sync signal (SignalLastSyncRV, EDGE-CASES 6): it starts its
	// workers when a look (every 100 ms, and at every handler call) finds
	// it set. The reflector sets it as soon as the list is in the
	// informer's queue, before the handlers have seen it.
	LastSyncRVName = RealFIFOName + "/lastsync-rv"
)

// variant is what a RealFIFO variant changes; the zero value (with name
// RealFIFOName) is the real controller.
type variant struct {
	name          string
	noWatchList   bool
	stripListRV   bool
	panicOnPoison bool
	sourcesOnly   bool
	skipSameRV    bool
	hideTooLarge  bool
	lastSyncRV    bool
}

func init() {
	// A handler panic must not kill the lab's process: with the default
	// (true), client-go's processorListener re-panics and the whole test
	// binary dies. Set once, before any run's goroutine reads it. Subjects
	// that want a panic dropped must still recover it themselves (as
	// Bellerophon does) unless they mean to show what client-go does.
	utilruntime.ReallyCrash = false

	for _, v := range []struct {
		v       variant
		summary string
		source  string
	}{
		{variant{name: PanickingHandlerName, panicOnPoison: true},
			"informer-realfifo whose OnAdd panics on a ConfigMap annotated " + PoisonAnnotation + ": the registration's HasSynced never turns true",
			"k/k#129024: a panicking handler never syncs"},
		{variant{name: NoWatchListName, noWatchList: true},
			"informer-realfifo opting out of WatchList (IsWatchListSemanticsUnSupported): LIST, then watch",
			"client-go v0.35+: WatchListClient on by default, skipped when the ListerWatcher opts out"},
		{variant{name: ListWithoutRVName, noWatchList: true, stripListRV: true},
			"informer-realfifo without WatchList whose lists carry no resourceVersion: it watches from \"\", with synthetic ADDED events in key order",
			"k/k PR #136583: the reflector does not resume from synthetic ADDED events' RVs"},
		{variant{name: SourcesOnlyName, sourcesOnly: true},
			"informer-realfifo that ignores mirror events: a mirror changed behind its back is repaired only by a relist or a resync",
			"k/k PR #86015: relists and resyncs both reach OnUpdate with an unchanged object"},
		{variant{name: SkipsSameRVName, sourcesOnly: true, skipSameRV: true},
			"sources-only, and drops every OnUpdate with old.RV == new.RV as a resync: also a relist's unchanged objects",
			"k/k PR #86015: a relist is not a resync"},
		{variant{name: IgnoresTooLargeName, hideTooLarge: true},
			"informer-realfifo whose ListerWatcher hides the cause of a 504 \"Too large resource version\": its reflector retries at the same resourceVersion while the replica lags",
			"k/k#91073: reflectors looped on \"Too large resource version\" (fixed by PRs #92537, #94316)"},
		{variant{name: LastSyncRVName, lastSyncRV: true},
			"informer-realfifo that starts its workers once informer.LastSyncResourceVersion() is set, before its handler has seen the list",
			"client-go v0.37.2 reflector.go: LastSyncResourceVersion is set once the list is queued, not synchronised with the store"},
	} {
		sim.RegisterSubject(sim.SubjectInfo{
			Name: v.v.name, Summary: v.summary, Mutant: true, Source: v.source,
			New: func() sim.Subject { return &RealFIFOSubject{v: v.v} },
		})
	}
}

// poisoned reports whether obj carries PoisonAnnotation="true".
func poisoned(obj any) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[PoisonAnnotation] == "true"
}

// newLW returns the subject's ListerWatcher for ConfigMaps, dropping the
// initial-events-end bookmark (and noting it) when the parameters say so.
func newLW(ctx context.Context, env sim.Env, p params, h handlerRecorder) lwAdapter {
	lw := lwAdapter{ListerWatcherWithContext: env.ListerWatcher(mirror.GVR, p.namespace), ctx: ctx}
	if p.dropEndBM {
		lw.dropEndBookmark = func() {
			h.note("the link dropped the k8s.io/initial-events-end bookmark (" + ParamDropEndBookmark + "=true)")
		}
	}
	return lw
}
