package sim

// AssumeAllIndependent makes the exploration's reduction treat every two
// releases as independent (a wrong relation), until the returned function
// restores it.
func AssumeAllIndependent() (restore func()) {
	dependentRelation = func(a, b ticketInfo) bool { return false }
	return func() { dependentRelation = dependent }
}

// PendingRetriesForTest returns how many keys have a retry pending after
// recs (pendingRetries).
func PendingRetriesForTest(recs []Record) int { return len(pendingRetries(recs)) }

// BatchOrdersForTest returns batchOrders(schedule).
func BatchOrdersForTest(schedule []string) map[int][]string { return batchOrders(schedule) }
