package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/sim/plan"
)

// The named moments of a run, so that a fault can be placed where a
// reference run shows the controller reading or writing (Sieve's test
// plans): the revision just before each plan step was played, and just
// before each write request of the subject was applied; and the crash
// armed for right after the subject's k-th write (Step.AfterWrite).

// Moment kinds of Step.AsOf (see plan.ParseMoment).
const (
	MomentStep  = plan.MomentStep
	MomentWrite = plan.MomentWrite
)

// ParseMoment reads a Step.AsOf ("step:N" or "write:K").
func ParseMoment(s string) (kind string, n int, err error) { return plan.ParseMoment(s) }

// FormatMoment formats a Step.AsOf.
func FormatMoment(kind string, n int) string { return plan.FormatMoment(kind, n) }

// moments is the policy's record of the run's named moments (guarded by
// Policy.mu).
type moments struct {
	// subject is the subject's client name (the plan's subject).
	subject string
	// stepRV is the server's revision just before step i was played.
	stepRV map[int]int64
	// writeRV[k-1] is the revision just before the subject's k-th write
	// request was applied.
	writeRV []int64
	// crashes are armed after-write crashes.
	crashes []armedCrash
}

// armedCrash is a crash waiting for the subject's k-th write.
type armedCrash struct {
	k    int
	fire chan struct{}
}

// serverRV returns the server's latest resourceVersion, false before the
// run has given the policy its server. It takes the server's lock without
// the policy's: the server calls the policy with its own lock held.
func (p *Policy) serverRV() (int64, bool) {
	p.mu.Lock()
	srv := p.server
	p.mu.Unlock()
	if srv == nil {
		return 0, false
	}
	return srv.ResourceVersion(), true
}

// StepPlayed records the server's revision just before plan step i is
// played (the run calls it first thing for every step).
func (p *Policy) StepPlayed(i int) {
	rv, ok := p.serverRV()
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.moments.stepRV[i]; !ok {
		p.moments.stepRV[i] = rv
	}
}

// countSubjectWrite counts a write request of the subject, records the
// revision before it and fires the crash armed for it. It is called before
// the request is applied, with no lock held. It returns the write's rank
// (k for the subject's k-th write), 0 for a request that is not counted.
func (p *Policy) countSubjectWrite(req fakeapi.RequestInfo) int {
	if !IsCountedWrite(req.Client == p.moments.subject, req.Verb, req.Resource.Resource) {
		return 0
	}
	rv, _ := p.serverRV()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &p.moments
	m.writeRV = append(m.writeRV, rv)
	k := len(m.writeRV)
	m.crashes = slices.DeleteFunc(m.crashes, func(c armedCrash) bool {
		if c.k == k {
			close(c.fire)
			return true
		}
		return false
	})
	return k
}

// SubjectWrites returns how many write requests of the subject reached
// the policy so far.
func (p *Policy) SubjectWrites() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.moments.writeRV)
}

// ArmCrashAfterWrite returns a channel closed when the subject's k-th
// write request reaches the policy (it is then applied; the run crashes
// the subject before anything else of it is served). If that write has
// already happened, the channel is closed at once.
func (p *Policy) ArmCrashAfterWrite(k int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	fire := make(chan struct{})
	if len(p.moments.writeRV) >= k {
		close(fire)
		return fire
	}
	p.moments.crashes = append(p.moments.crashes, armedCrash{k: k, fire: fire})
	return fire
}

// DisarmCrashes cancels every after-write crash that has not fired.
func (p *Policy) DisarmCrashes() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.moments.crashes = nil
}

// momentRVLocked returns the revision of a named moment (Step.AsOf), and
// false if it has not happened (or cannot be read).
func (p *Policy) momentRVLocked(asOf string) (int64, bool) {
	kind, n, err := plan.ParseMoment(asOf)
	if err != nil {
		return 0, false
	}
	switch kind {
	case MomentStep:
		rv, ok := p.moments.stepRV[n]
		return rv, ok
	case MomentWrite:
		if n <= len(p.moments.writeRV) {
			return p.moments.writeRV[n-1], true
		}
	}
	return 0, false
}

// crashAfterWrite arms the crash of step i for right after the subject's
// Step.AfterWrite-th write; the timeline goes on meanwhile. If it has not
// fired by the next controller step, that step crashes the subject first.
func (r *run) crashAfterWrite(i int) {
	if r.subj == nil {
		return
	}
	r.crashFired, r.crashStep = r.policy.ArmCrashAfterWrite(r.plan.Steps[i].AfterWrite), i
}

// armedCrashDetail describes an armed crash that fired.
func (r *run) armedCrashDetail() string {
	if k := r.plan.Steps[r.crashStep].AfterWrite; k > 0 {
		return fmt.Sprintf("step %d: right after the subject's write #%d", r.crashStep, k)
	}
	return fmt.Sprintf("step %d: mid-reconcile", r.crashStep)
}

// asOfText describes a stale-replica step's AsOf for its fault record.
func asOfText(asOf string) string {
	kind, n, err := plan.ParseMoment(asOf)
	switch {
	case asOf == "" || err != nil:
		return ""
	case kind == MomentStep:
		return fmt.Sprintf(", the state just before step %d", n)
	}
	return fmt.Sprintf(", the state just before the subject's write #%d", n)
}

// IsCountedWrite reports whether a request counts as one of the subject's
// writes for Step.AfterWrite and Step.AsOf "write:K": a create, update,
// patch or delete (status included) by the subject, of anything but
// Events (client-go's event recorder writes them from its own goroutine,
// at no fixed point of a reconcile). verb may carry a subresource
// ("update/status"), as trace records do.
func IsCountedWrite(bySubject bool, verb, resource string) bool {
	verb, _, _ = strings.Cut(verb, "/")
	res, _, _ := strings.Cut(resource, ".")
	return bySubject && slices.Contains(WriteVerbs, verb) && res != "events"
}
