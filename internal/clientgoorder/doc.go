// Package clientgoorder holds tests that run client-go alone (no fake API
// server, no lab): the evidence behind the upstream report in
// docs/upstream-watchlist-order.md, that a shared informer hands a
// WatchList's initial objects to its event handlers in Go's randomized map
// order rather than in the order the server sent them.
package clientgoorder
