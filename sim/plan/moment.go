package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Moment kinds of a Step.AsOf.
const (
	// MomentStep names the moment just before a plan step was played.
	MomentStep = "step"
	// MomentWrite names the moment just before the subject's k-th write
	// request was applied.
	MomentWrite = "write"
)

// ParseMoment reads a Step.AsOf: "step:N" (N >= 0, a plan step's index)
// or "write:K" (K >= 1, the subject's K-th write request).
func ParseMoment(s string) (kind string, n int, err error) {
	k, v, ok := strings.Cut(s, ":")
	n, aerr := strconv.Atoi(v)
	switch {
	case !ok || aerr != nil:
		return "", 0, fmt.Errorf("%q: give step:N (just before plan step N) or write:K (just before the subject's K-th write)", s)
	case k == MomentStep && n >= 0, k == MomentWrite && n >= 1:
		return k, n, nil
	}
	return "", 0, fmt.Errorf("%q: give step:N with N >= 0 or write:K with K >= 1", s)
}

// FormatMoment is the inverse of ParseMoment.
func FormatMoment(kind string, n int) string { return kind + ":" + strconv.Itoa(n) }
