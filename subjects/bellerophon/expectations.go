package bellerophon

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ExpectationsTimeout is how long unfulfilled expectations block a
// Bellerophon's child management before the controller gives up on them, as
// k8s.io/kubernetes/pkg/controller.ExpectationsTimeout (5 minutes). An
// informer that lags longer than this still causes duplicates (EDGE 23,
// k/k#129795).
const ExpectationsTimeout = 5 * time.Minute

// expectations is the small part of the ReplicaSet controller's
// ControllerExpectations (k8s.io/kubernetes/pkg/controller/
// controller_utils.go) that Bellerophon needs, reimplemented because that
// package is not importable outside kubernetes/kubernetes.
//
// Before creating n Pods for a Bellerophon the controller records "expect n
// adds"; the Pod handler lowers the count as each create is observed through
// the informer; while any count is above zero, the Bellerophon's Pods are not
// managed (its status still is), because the Pod lister does not yet show
// what the controller itself did. Deletes work the same way.
//
// Unlike upstream, a record remembers the UID of the Bellerophon it was set
// for: Satisfied and the observe methods ignore a record of another
// incarnation (the UpdateFunc of the ReplicaSet controller resets
// expectations on a UID change for the same reason, k/k PR #82572). With
// byNameOnly (the no-uid-check mutant) the UID is ignored.
type expectations struct {
	mu sync.Mutex
	// records maps namespace/name to the pending expectations.
	records map[string]*expectation
	// byNameOnly ignores UIDs (NoUIDCheck).
	byNameOnly bool
	// now is the clock (time.Now: virtual inside a synctest bubble).
	now func() time.Time
}

// expectation is one Bellerophon's pending adds and deletes.
type expectation struct {
	uid       types.UID
	add, del  int64
	timestamp time.Time
}

func newExpectations(byNameOnly bool) *expectations {
	return &expectations{records: map[string]*expectation{}, byNameOnly: byNameOnly, now: time.Now}
}

// Satisfied reports whether key (of the Bellerophon with uid) may have its
// Pods managed: no record, a record of another incarnation, every expected
// add and delete observed, or the record older than ExpectationsTimeout.
// expired is true in the last case.
func (e *expectations) Satisfied(key string, uid types.UID) (ok, expired bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, found := e.records[key]
	if !found || (!e.byNameOnly && r.uid != uid) {
		return true, false
	}
	if r.add <= 0 && r.del <= 0 {
		return true, false
	}
	if e.now().Sub(r.timestamp) > ExpectationsTimeout {
		return true, true
	}
	return false, false
}

// Expect sets (replacing any earlier record) the adds and deletes the
// controller is about to make for key.
func (e *expectations) Expect(key string, uid types.UID, add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.records[key] = &expectation{uid: uid, add: int64(add), del: int64(del), timestamp: e.now()}
}

// CreationObserved lowers the expected adds of key by one, if the record is
// for uid (the owner UID of the observed Pod).
func (e *expectations) CreationObserved(key string, uid types.UID) {
	e.lower(key, uid, 1, 0)
}

// DeletionObserved lowers the expected deletes of key by one, if the record
// is for uid. It reports whether a delete was expected.
func (e *expectations) DeletionObserved(key string, uid types.UID) bool {
	return e.lower(key, uid, 0, 1)
}

// lower lowers the counts and reports whether the one lowered was above
// zero (the add or delete was expected).
func (e *expectations) lower(key string, uid types.UID, add, del int64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, found := e.records[key]
	if !found || (!e.byNameOnly && r.uid != uid) {
		return false
	}
	expected := (add > 0 && r.add > 0) || (del > 0 && r.del > 0)
	r.add -= add
	r.del -= del
	return expected
}

// Delete forgets key's record (the Bellerophon is gone or was replaced by
// another incarnation).
func (e *expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.records, key)
}

// DeleteFor forgets key's record if it belongs to the incarnation uid (or
// with byNameOnly, any record).
func (e *expectations) DeleteFor(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok && (e.byNameOnly || r.uid == uid) {
		delete(e.records, key)
	}
}
