package scenarios

import "slices"

// Part is one leg of the guided course: a question of the origin notes
// (ORIGIN.md) and the edge cases that answer it, in EDGE-CASES.md order.
type Part struct {
	// Letter is the part's letter in EDGE-CASES.md ("A").
	Letter string
	// Question is the origin notes' question the part answers.
	Question string
	// Stops are the part's edge cases, in order.
	Stops []Stop
}

// Stop is one edge case of the course: its lesson in one paragraph and the
// scenarios that show it.
type Stop struct {
	// Edge is the entry number in EDGE-CASES.md (1..28).
	Edge int
	// Title is the entry's title.
	Title string
	// Lesson is what to take away, in one paragraph.
	Lesson string
	// Scenarios are the names of the built-in scenarios whose edge list
	// names this entry, the ones made for it first (those that name it
	// first in their edge list), then the others.
	Scenarios []string
}

// Label returns the stop's label, "A1".
func (s Stop) Label() string { return EdgeLabel(s.Edge) }

// course is the path, without scenarios (Course adds them).
var course = []Part{
	{Letter: "A", Question: `What does "the cache is synced" mean?`, Stops: []Stop{
		{Edge: 1, Title: "Store synced is not handler synced",
			Lesson: "informer.HasSynced turns true once the initial list is in the store and queued for the handlers; a slow handler has not seen it yet. Wait for the handler registration's HasSynced before starting workers that read state the handlers build."},
		{Edge: 2, Title: "A panicking handler never syncs",
			Lesson: "With utilruntime.ReallyCrash=false client-go skips the item a handler panicked on; the registration never counts it, so its HasSynced stays false and a controller that waits for it never starts. Nothing fails loudly: recover in your handler, or let the process die."},
		{Edge: 3, Title: "The legacy DeltaFIFO closes its synced channel early",
			Lesson: "A DeltaFIFO closes its synced channel when the last initial item is popped, before it is processed; RealFIFO only after. Hand-built controllers on cache.New with a DeltaFIFO can start acting one item too early."},
		{Edge: 4, Title: "Quiescence is not sync",
			Lesson: `"No event for 10x the loop time" only means nothing arrived: a slow watch or a long list is still on its way. Silence is not a sync signal; count the initial items instead.`},
		{Edge: 5, Title: "WatchList without the end bookmark never syncs",
			Lesson: "Since v0.35 the initial list is a watch stream that ends with a k8s.io/initial-events-end bookmark; the store stays empty until it arrives. Without it the informer never syncs and never falls back to LIST: the bookmark is the sync."},
		{Edge: 6, Title: "LastSyncResourceVersion is not a sync signal",
			Lesson: "The reflector sets LastSyncResourceVersion as soon as a list or event is in the informer's queue, not synchronised with the store (in v0.37.2 the store fills in the same instant, so the lab shows the gap that matters: the handlers, still working through the list). Wait for the handler registration's HasSynced; to know what the cache holds, read the store's own resourceVersion (LastStoreSyncResourceVersion, with AtomicFIFO)."},
	}},
	{Letter: "B", Question: "What goes wrong with deletion and recreation?", Stops: []Stop{
		{Edge: 7, Title: "Tombstones",
			Lesson: "A delete missed while the watch was down reaches OnDelete after the relist as a DeletedFinalStateUnknown wrapping the last cached copy. Every OnDelete must unwrap it; a cache with no rule for \"absent from the list\" keeps the object forever."},
		{Edge: 8, Title: "Delete + recreate arrives as one update",
			Lesson: "Deleted and recreated under the same name while the watch was down, an object comes back as one OnUpdate(old uid, new uid). Compare UIDs: a controller keyed by name inherits the old incarnation's state."},
		{Edge: 9, Title: "An ADD still queued when a relist shows the object gone",
			Lesson: "The handler runs behind the store: it may get OnAdd for an object the store already dropped, then the tombstone. Read the cache in the worker, not the event's object, and expect the delete to follow."},
		{Edge: 10, Title: "Relist treated as resync",
			Lesson: "A relist hands every unchanged object to OnUpdate with the same resourceVersion, exactly like a resync. The old.RV == new.RV \"only a resync\" idiom also drops the relist, the informer's repair of what it missed."},
		{Edge: 11, Title: "Finalizers",
			Lesson: "Delete only sets deletionTimestamp; the object lives on until its finalizers are gone. Do not create children under a terminating owner, and always remove your finalizer once your cleanup is done."},
	}},
	{Letter: "C", Question: "What does time do to a watch?", Stops: []Stop{
		{Edge: 12, Title: "Time travel",
			Lesson: "A list at resourceVersion \"0\" may be served by a lagging cache: after a restart a controller can see state older than it saw before. Within one run client-go relists \"not older than\" what it saw; across restarts only a consistent read protects you."},
		{Edge: 13, Title: "410 Gone",
			Lesson: "When the history a watch needs is compacted, the re-watch gets 410 and the informer relists; deletes in the gap become tombstones. A relist is normal operation, not an error."},
		{Edge: 14, Title: "Too large resource version",
			Lesson: "A replica behind the client answers a list or WatchList at the client's resourceVersion with 504 \"Too large resource version\"; v0.37.2 recognises it by its cause and asks again at RV=\"\" (consistent). A reflector that cannot tell it from any timeout asks again at the same resourceVersion, for as long as the replica lags."},
		{Edge: 15, Title: "Bookmarks",
			Lesson: "Bookmarks move a quiet watch's resourceVersion forward, so a re-watch after a long silence does not hit 410 and relist."},
		{Edge: 16, Title: "Synthetic ADDED events in arbitrary order",
			Lesson: "A watch from RV \"\" or \"0\" starts with synthetic ADDED events in no particular RV order; since v0.36 the reflector does not resume from their RVs until a real event."},
		{Edge: 17, Title: "Timeouts and backoff",
			Lesson: "Watches end routinely (5-10 min timeouts, proxies). A clean close or a 429 re-watches from the last resourceVersion without a relist; only a watch that dies within a second with no event makes the reflector relist."},
		{Edge: 18, Title: "Changes between List and Watch",
			Lesson: "A change between the list and the watch must be replayed by the watch from the list's resourceVersion. client-go's fake clientset lost such changes (deletions still, k/k#141528); a real server replays them or answers 410."},
	}},
	{Letter: "D", Question: "Can a controller rely on order?", Stops: []Stop{
		{Edge: 19, Title: "Order",
			Lesson: "One handler sees one informer's events in watch order, except a relist (tombstones first). Different informers are not coordinated, and the store runs ahead of the handler: a lister read may show another object newer or older than the event."},
		{Edge: 20, Title: "De-duplication and coalescing",
			Lesson: "The legacy DeltaFIFO grouped a key's events ahead of others and merged consecutive deletes; RealFIFO hands every watch event to every handler in watch order."},
		{Edge: 21, Title: "Resync delivers OnUpdate(obj, obj)",
			Lesson: "A resync hands the same cached object twice to handlers due for it, only with a non-zero resync period. Dropping same-resourceVersion updates drops the periodic re-check you asked for."},
	}},
	{Letter: "E", Question: "What does a controller built on a stale cache do?", Stops: []Stop{
		{Edge: 22, Title: "Duplicate creates without expectations",
			Lesson: "Your own creates reach your cache later than you make them: count them with expectations, or the next reconcile creates them again."},
		{Edge: 23, Title: "Lagging informer and expiring expectations",
			Lesson: "Expectations that expire before a lagging informer catches up create extra children all the same."},
		{Edge: 24, Title: "Stale-controller mitigation",
			Lesson: "Record the resourceVersion of your own writes and do not act until the informer's store has caught up with it (KEP-5647)."},
		{Edge: 25, Title: "409 Conflict",
			Lesson: "An update from a stale cached copy gets 409 Conflict: retry with a fresh read, never drop it, never write without a precondition."},
		{Edge: 26, Title: "A competing writer",
			Lesson: "Another controller writing the same object must converge with you, not start a write war: own distinct fields, or agree."},
		{Edge: 27, Title: "Controller crash mid-reconcile",
			Lesson: "A restart begins with an empty cache and half-done work: finish it from the server's state, do not duplicate it."},
		{Edge: 28, Title: "Write with unknown outcome",
			Lesson: "A write that timed out on the client may have been applied: the retry must not apply it twice (use names, preconditions, or read first)."},
	}},
}

// Course returns the guided course: the 28 edge cases of EDGE-CASES.md in
// order, grouped by the origin notes' questions (what "synced" means,
// deletions, time, order, controllers), each with its lesson and the
// built-in scenarios that show it.
func Course() ([]Part, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	out := make([]Part, len(course))
	for i, p := range course {
		p.Stops = slices.Clone(p.Stops)
		for j := range p.Stops {
			st := &p.Stops[j]
			var first, other []string
			for _, s := range all {
				switch k := slices.Index(s.EdgeCases, st.Edge); {
				case k == 0:
					first = append(first, s.Name)
				case k > 0:
					other = append(other, s.Name)
				}
			}
			st.Scenarios = append(first, other...)
		}
		out[i] = p
	}
	return out, nil
}
