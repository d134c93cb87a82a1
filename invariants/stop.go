package invariants

import "fmt"

// stopEvery is how many trace positions a check goes between two looks at
// Options.Stop: a look is a select on a channel, cheap next to a record's
// work, and a stopped check returns within a few thousand records.
const stopEvery = 1024

// stopped reports whether o.Stop is closed, looking at it only at every
// stopEvery-th trace position pos (false in between, and always when Stop
// is nil).
func (o Options) stopped(pos int) bool {
	if o.Stop == nil || pos%stopEvery != 0 {
		return false
	}
	select {
	case <-o.Stop:
		return true
	default:
		return false
	}
}

// stoppedVerdict is the Unknown verdict of a check that gave up at trace
// position pos of n records because its judge's limit passed.
func stoppedVerdict(name string, pos, n int) Verdict {
	return unknownBecause(name, "judging stopped (limit)", fmt.Sprintf("judging stopped at position %d of %d records: the judge's limit passed (Options.Stop closed) and the check gave up", pos, n))
}
