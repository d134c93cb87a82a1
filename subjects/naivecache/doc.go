// Package naivecache is the watch-fed cache sketched in the project's origin
// notes (ORIGIN.md): a map keyed namespace/name fed by a raw watch, "synced"
// when no event came for 10x the loop time. It exists to fail in instructive
// ways.
package naivecache
