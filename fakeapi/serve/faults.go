package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/fakeapi"
)

// Faults is a live fault profile, as JSON on /admin/faults. The zero value
// injects nothing. Requests by the "seed" client are never faulted.
type Faults struct {
	// ErrorRate is the fraction (0..1) of requests failed with ErrorCode
	// without touching the store.
	ErrorRate float64 `json:"errorRate,omitempty"`
	// ErrorCode is 429, 500, 503 or 504. Optional; default 503.
	ErrorCode int `json:"errorCode,omitempty"`
	// RetryAfterSeconds, if positive, is sent as Retry-After with 429, 503
	// and 504 (client-go then retries the request itself).
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
	// ApplyThenTimeoutRate is the fraction (0..1) of writes applied and then
	// answered 504 (a write with unknown outcome).
	ApplyThenTimeoutRate float64 `json:"applyThenTimeoutRate,omitempty"`
	// EventDelay holds every watch event this long ("250ms").
	EventDelay Duration `json:"eventDelay,omitempty"`
	// ReplicaLag serves lists and watches at resourceVersion "0" this many
	// revisions behind the latest (a stale replica).
	ReplicaLag int64 `json:"replicaLag,omitempty"`
	// WatchBreakInterval, if positive, ends one open watch (drawn at
	// random) every interval ("30s"): a clean close, or with
	// WatchBreakAbrupt a reset stream (the client sees a decoding ERROR).
	WatchBreakInterval Duration `json:"watchBreakInterval,omitempty"`
	// WatchBreakAbrupt makes WatchBreakInterval's closes abrupt.
	WatchBreakAbrupt bool `json:"watchBreakAbrupt,omitempty"`
	// Seed seeds the fault draws. Optional; default 1.
	Seed uint64 `json:"seed,omitempty"`
}

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

// MarshalJSON writes "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.5s" (or a number of nanoseconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("a duration is a string like \"250ms\": %w", err)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Validate reports the first invalid field, saying what is allowed.
func (f Faults) Validate() error {
	switch {
	case f.ErrorRate < 0 || f.ErrorRate > 1:
		return fmt.Errorf("errorRate must be within 0..1, got %v", f.ErrorRate)
	case f.ApplyThenTimeoutRate < 0 || f.ApplyThenTimeoutRate > 1:
		return fmt.Errorf("applyThenTimeoutRate must be within 0..1, got %v", f.ApplyThenTimeoutRate)
	case f.ErrorCode != 0 && f.ErrorCode != 429 && f.ErrorCode != 500 && f.ErrorCode != 503 && f.ErrorCode != 504:
		return fmt.Errorf("errorCode must be 429, 500, 503 or 504, got %d", f.ErrorCode)
	case f.RetryAfterSeconds < 0:
		return fmt.Errorf("retryAfterSeconds must not be negative, got %d", f.RetryAfterSeconds)
	case f.EventDelay < 0:
		return fmt.Errorf("eventDelay must not be negative, got %v", time.Duration(f.EventDelay))
	case f.WatchBreakInterval < 0:
		return fmt.Errorf("watchBreakInterval must not be negative, got %v", time.Duration(f.WatchBreakInterval))
	case f.ReplicaLag < 0:
		return fmt.Errorf("replicaLag must not be negative, got %d", f.ReplicaLag)
	}
	return nil
}

// faultHooks is the fakeapi.Hooks of a served server: the live profile.
type faultHooks struct {
	mu  sync.Mutex
	f   Faults
	rng *rand.Rand
}

var _ fakeapi.Hooks = (*faultHooks)(nil)

func newFaultHooks(f Faults) (*faultHooks, error) {
	h := &faultHooks{}
	if err := h.set(f); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *faultHooks) set(f Faults) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("serve: fault profile: %w", err)
	}
	seed := f.Seed
	if seed == 0 {
		seed = 1
	}
	h.mu.Lock()
	h.f = f
	h.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	h.mu.Unlock()
	return nil
}

func (h *faultHooks) get() Faults {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.f
}

// BeforeRequest draws the fate of one request.
func (h *faultHooks) BeforeRequest(req fakeapi.RequestInfo) fakeapi.RequestFault {
	if req.Client == "seed" {
		return fakeapi.RequestFault{}
	}
	h.mu.Lock()
	f := h.f
	failed := f.ErrorRate > 0 && h.rng.Float64() < f.ErrorRate
	timeout := !failed && f.ApplyThenTimeoutRate > 0 && isWrite(req.Verb) && h.rng.Float64() < f.ApplyThenTimeoutRate
	h.mu.Unlock()
	out := fakeapi.RequestFault{ReplicaLag: f.ReplicaLag}
	switch {
	case failed:
		out.Err = faultError(f, req.Resource.GroupResource())
		out.Name = fmt.Sprintf("error-%d", code(f))
	case timeout:
		out.ApplyThenTimeout = true
		out.Name = "apply-then-timeout"
	}
	return out
}

// EventDelay holds every event for the profile's delay.
func (h *faultHooks) EventDelay(fakeapi.WatcherInfo, fakeapi.EventInfo) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Duration(h.f.EventDelay)
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

func code(f Faults) int {
	if f.ErrorCode == 0 {
		return 503
	}
	return f.ErrorCode
}

// faultError is the injected error for f's code.
func faultError(f Faults, gr schema.GroupResource) error {
	const msg = "injected by cachelab serve's fault profile"
	switch code(f) {
	case 429:
		return apierrors.NewTooManyRequests(msg, f.RetryAfterSeconds)
	case 500:
		return apierrors.NewInternalError(fmt.Errorf("%s", msg))
	case 504:
		return apierrors.NewTimeoutError(msg, f.RetryAfterSeconds)
	}
	err := apierrors.NewServiceUnavailable(msg)
	if f.RetryAfterSeconds > 0 {
		err.ErrStatus.Details = detailsWithRetry(gr, f.RetryAfterSeconds)
	}
	return err
}

// breakWatches ends one open watch every WatchBreakInterval of the live
// profile, until ctx ends.
func (h *faultHooks) breakWatches(ctx context.Context, api *fakeapi.Server) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			h.mu.Lock()
			every, abrupt := time.Duration(h.f.WatchBreakInterval), h.f.WatchBreakAbrupt
			h.mu.Unlock()
			if every <= 0 || now.Sub(last) < every {
				continue
			}
			last = now
			ws := api.Watchers()
			if len(ws) == 0 {
				continue
			}
			h.mu.Lock()
			i := h.rng.IntN(len(ws))
			h.mu.Unlock()
			_ = api.CloseWatch(ws[i].ID, abrupt)
		}
	}
}

// ParseFaults reads a fault profile from JSON, refusing unknown fields and
// invalid values with an error that names them.
func ParseFaults(data []byte) (Faults, error) {
	var f Faults
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Faults{}, fmt.Errorf("fault profile: %w (fields: errorRate, errorCode, retryAfterSeconds, applyThenTimeoutRate, eventDelay, replicaLag, watchBreakInterval, watchBreakAbrupt, seed)", err)
	}
	if err := f.Validate(); err != nil {
		return Faults{}, fmt.Errorf("fault profile: %w", err)
	}
	return f, nil
}

// LoadFaults reads a fault profile from a JSON file (ParseFaults).
func LoadFaults(path string) (Faults, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Faults{}, fmt.Errorf("fault profile: %w", err)
	}
	f, err := ParseFaults(data)
	if err != nil {
		return Faults{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
