package invariants_test

import (
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/invariants/tracebuild"
)

// A handler record of an update that lacks the old object's UID (a
// hand-written recorder that forgot OldUID) cannot say whether the handler
// was told of a UID change: delete-recreate must say Unknown, and why, not
// Fail (issue 15 measured a false Fail in 4 of 5 runs from such records).
func TestUpdateRecordWithoutOldUIDIsUnknownForDeleteRecreate(t *testing.T) {
	h := newHealthyRun()
	_, nw := recreated(h)
	r := h.b.HandleUpdate(ctrl, "pods", h.pod0, nw)
	tr := h.end().Trace("quiet")
	tr.Records[r.Pos].OldUID, tr.Records[r.Pos].OldRV = "", 0
	v := invariants.DeleteRecreate(tr)
	wantStatus(t, v, invariants.Unknown)
	if !strings.Contains(v.Reason, "OldUID") {
		t.Errorf("reason %q does not say which field is missing", v.Reason)
	}
}

// An incomplete record does not hide a failure the complete records prove.
func TestIncompleteRecordDoesNotHideAProvenDeleteRecreateFailure(t *testing.T) {
	h := newHealthyRun()
	_, nw := recreated(h)
	r := h.b.HandleUpdate(ctrl, "pods", h.pod0, nw)
	h.b.At(6 * sec)
	h.b.Delete("user", "pods", "ns", "p-1")
	nw1 := h.b.Create(ctrl, tracebuild.Obj{Resource: "pods", Namespace: "ns", Name: "p-1", Owner: h.parent.UID})
	bad := h.b.Handle(ctrl, "pods", "ADDED", nw1) // still knows the old p-1
	tr := h.end().Trace("quiet")
	tr.Records[r.Pos].OldUID = ""
	v := invariants.DeleteRecreate(tr)
	wantStatus(t, v, invariants.Fail)
	wantPositions(t, v, bad.Pos)
}
