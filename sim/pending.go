package sim

import (
	"fmt"
	"sort"
	"strings"
)

// RequeueAfterPrefix starts the Detail of a RecQueue "requeue" record
// written for a workqueue's AddAfter (a retry the controller scheduled
// itself, at a delay it chose: a periodic resync, "come back in a
// second"), as against AddRateLimited (a retry after a failure, at the
// rate limiter's backoff). Only the second keeps a run from being quiet.
const RequeueAfterPrefix = "after "

// pendingRetries returns, for each actor and key whose latest reconcile
// failed (its "end" record holds an error) or was requeued with
// AddRateLimited, and that has not been picked up again since (no later
// "start" or queue "get" of it), the record that left it pending: the
// controller has said it is not done with the key, and its retry will
// come at the rate limiter's backoff, which no record announces. Keys are
// "actor key".
//
// Work under way is pending too: a reconcile started and not ended, a key
// added to a recorded queue and not taken yet. A crash ends all of its
// process's pending work (the restarted process lists and starts over).
func pendingRetries(recs []Record) map[string]Record {
	pending := map[string]Record{}
	for _, r := range recs {
		switch r.Kind {
		case RecReconcile:
			k := r.Actor + " " + r.Key
			switch {
			case r.Op == "start":
				pending[k] = r
			case r.Op == "end" && failedReconcile(r.Result):
				pending[k] = r
			case r.Op == "end":
				delete(pending, k)
			}
		case RecQueue:
			k := r.Actor + " " + r.Key
			switch r.Op {
			case "get":
				if p, ok := pending[k]; ok && p.Kind == RecQueue {
					delete(pending, k)
				}
			case "add":
				if _, ok := pending[k]; !ok {
					pending[k] = r
				}
			case "requeue":
				if !strings.HasPrefix(r.Detail, RequeueAfterPrefix) {
					pending[k] = r
				}
			}
		case RecCrash:
			for pk, p := range pending {
				if p.Actor == r.Actor {
					delete(pending, pk)
				}
			}
		}
	}
	return pending
}

// failedReconcile reports whether a reconcile "end" record's Result says
// the reconcile failed (an error, a panic) rather than "ok", "requeued"
// (a recorded queue's AddRateLimited or AddAfter during the reconcile: its
// queue record says which) or "requeued after <d>" (controller-runtime's
// RequeueAfter).
func failedReconcile(result string) bool {
	return result != "" && result != "ok" && result != "requeued" && !strings.HasPrefix(result, "requeued after ")
}

// pendingRetry reports the retries pending now (see pendingRetries), as a
// sentence naming the first few, and whether there is one.
func (r *recorder) pendingRetry() (string, bool) {
	r.mu.Lock()
	pending := pendingRetries(r.recs)
	r.mu.Unlock()
	if len(pending) == 0 {
		return "", false
	}
	keys := make([]string, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for i, k := range keys {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-3))
			break
		}
		rec := pending[k]
		why := "requeued with AddRateLimited"
		switch {
		case rec.Kind == RecReconcile && rec.Op == "start":
			why = "a reconcile started and not ended"
		case rec.Kind == RecReconcile:
			why = "its last reconcile failed: " + firstLineOf(rec.Result)
		case rec.Op == "add":
			why = "queued, not taken yet"
		}
		parts = append(parts, fmt.Sprintf("%s (#%d, t=%s, %s)", k, rec.Pos, rec.At, why))
	}
	return "work is under way for " + strings.Join(parts, "; "), true
}

// firstLineOf returns s up to its first newline, cut at 200 bytes.
func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
