// Package layers says where the CPU of a lab run goes, layer by layer: it
// reads a Go CPU profile (runtime/pprof) and gives each sample to the layer
// whose code asked for that work, the innermost frame of the sample's stack
// that belongs to a layer (cachelab's packages, split by file where one
// package holds several layers, and client-go's). Frames of libraries (the
// Go runtime and standard library, apimachinery, k8s.io/api, JSON and
// protobuf code) belong to their caller: a ConfigMap decoded by the store
// counts as the store's, the same decode by client-go's watch decoder as
// client-go's. Samples of the garbage collector's background workers, and
// stacks with no layer frame (goroutine scheduling, idle), are the Go
// runtime's.
//
// It is the breakdown docs/figures.md gives for the standard scenario's
// paths, its floor and server baselines, and the informer-throughput
// workload's paths (the drop-in clientset against client-go's fake), measured
// by `CACHELAB_LAYERS=1 go test ./bench/layers -run TestLayerBreakdown -v`.
package layers

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"
)

// Layer names, in the order Rules tries them on each frame.
const (
	SimScheduler    = "sim: deterministic scheduler (sched*.go)"
	SimRecorder     = "sim: recorder (the trace)"
	SimPolicy       = "sim: fault policy"
	SimRun          = "sim: run, plan, steps, actors"
	Subject         = "subject (sim/simtest's informer + worker)"
	Harness         = "bench harness (floor/server timelines, workload loop)"
	HTTPHandler     = "fakeapi/http: REST handler + pipe"
	Store           = "fakeapi/store: MVCC store, validation, patches"
	WatchDelivery   = "fakeapi: watch delivery (watcher.go)"
	Fakeapi         = "fakeapi: server, clients, observations"
	Lab             = "cachelab: other"
	Informer        = "client-go: informer + workqueue"
	FakeClientset   = "client-go: fake clientset (testing.Fake, tracker)"
	REST            = "client-go: REST client, watch decoder, net/http"
	ClientGo        = "client-go: other"
	GCWorkers       = "Go runtime: GC background workers"
	RuntimeNoLayers = "Go runtime: scheduling, idle, other"
)

// A Rule gives frames to a layer: a frame whose function name starts with
// one of Prefixes (and, if File is set, whose file name contains File)
// belongs to Layer.
type Rule struct {
	Layer    string
	Prefixes []string
	File     []string
}

const lab = "github.com/cachelab/cachelab/"

// Rules are the layers, tried in order on each frame; the first rule that
// matches names the frame's layer (a rule of layer "" marks a library:
// its caller decides).
var Rules = []Rule{
	// client-go's watch encoder serves fakeapi/http's watches: a library
	// of its caller, the server.
	{"", []string{"k8s.io/client-go/rest/watch.(*Encoder)"}, nil},
	{SimScheduler, []string{lab + "sim."}, []string{"/sim/sched"}},
	{SimRecorder, []string{lab + "sim."}, []string{"/sim/recorder", "/sim/serverrec"}},
	{SimPolicy, []string{lab + "sim."}, []string{"/sim/policy", "/sim/jitter", "/sim/rng", "/sim/targeted", "/sim/breaking"}},
	{Subject, []string{lab + "sim/simtest."}, nil},
	{Harness, []string{lab + "sim/simbench.", lab + "fakeapi/fakeapibench.", lab + "bench/"}, nil},
	{SimRun, []string{lab + "sim."}, nil},
	{SimRun, []string{lab + "sim/"}, nil},
	{HTTPHandler, []string{lab + "fakeapi/http."}, nil},
	{Store, []string{lab + "fakeapi/store."}, nil},
	{WatchDelivery, []string{lab + "fakeapi."}, []string{"/fakeapi/watcher.go"}},
	{Fakeapi, []string{lab + "fakeapi."}, nil},
	{Lab, []string{lab}, nil},
	{Informer, []string{"k8s.io/client-go/tools/cache.", "k8s.io/client-go/util/workqueue."}, nil},
	{FakeClientset, []string{"k8s.io/client-go/testing.", "k8s.io/client-go/kubernetes/fake.", "k8s.io/client-go/kubernetes/typed/core/v1/fake.", "k8s.io/client-go/gentype.(*FakeClient"}, nil},
	{REST, []string{"k8s.io/client-go/rest.", "k8s.io/client-go/rest/", "k8s.io/client-go/transport.", "k8s.io/client-go/gentype.", "k8s.io/client-go/kubernetes/typed/", "k8s.io/client-go/dynamic.", "net/http."}, nil},
	{ClientGo, []string{"k8s.io/client-go/"}, nil},
}

// layerOf returns the layer of a frame, "" if it belongs to none (a
// library: its caller's layer decides).
func layerOf(fn *profile.Function) string {
	if fn == nil {
		return ""
	}
	for _, r := range Rules {
		if !hasPrefix(fn.Name, r.Prefixes) {
			continue
		}
		if len(r.File) == 0 || contains(fn.Filename, r.File) {
			return r.Layer
		}
	}
	return ""
}

func hasPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func contains(s string, subs []string) bool {
	for _, p := range subs {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// Share is one layer's part of a profile.
type Share struct {
	Layer string
	// CPU is the layer's CPU time in the profile.
	CPU time.Duration
	// Fraction is CPU over the profile's total.
	Fraction float64
}

// Breakdown gives each sample of p (a CPU profile: sample value "cpu" in
// nanoseconds) to the layer of the innermost layer frame of its stack (see
// the package comment) and returns the layers by CPU, largest first, and
// the profile's total CPU.
func Breakdown(p *profile.Profile) ([]Share, time.Duration, error) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return nil, 0, fmt.Errorf("layers: not a CPU profile (sample types %v)", p.SampleType)
	}
	cpu := map[string]time.Duration{}
	var total time.Duration
	for _, s := range p.Sample {
		v := time.Duration(s.Value[vi])
		total += v
		cpu[sampleLayer(s)] += v
	}
	var out []Share
	for l, v := range cpu {
		f := 0.0
		if total > 0 {
			f = float64(v) / float64(total)
		}
		out = append(out, Share{Layer: l, CPU: v, Fraction: f})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CPU != out[j].CPU {
			return out[i].CPU > out[j].CPU
		}
		return out[i].Layer < out[j].Layer
	})
	return out, total, nil
}

// sampleLayer is the layer of one sample: GC workers anywhere in the stack
// first, then the innermost layer frame (Location.Line lists inlined
// functions innermost first; Sample.Location is leaf first).
func sampleLayer(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil && strings.HasPrefix(ln.Function.Name, "runtime.gcBgMarkWorker") {
				return GCWorkers
			}
		}
	}
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			if l := layerOf(ln.Function); l != "" {
				return l
			}
		}
	}
	return RuntimeNoLayers
}

// Column is one profiled kind of run for Table: its name, its breakdown,
// and the unit to divide CPU by (runs, or events) with that unit's name.
type Column struct {
	Name   string
	Shares []Share
	Total  time.Duration
	Per    int
	Unit   string
}

// Table writes columns side by side: a row per layer (ordered by the first
// column's CPU, then the others'), each cell the layer's CPU per unit
// (µs) and its share of the column's total.
func Table(w io.Writer, cols []Column) error {
	seen := map[string]bool{}
	var rows []string
	for _, c := range cols {
		for _, s := range c.Shares {
			if !seen[s.Layer] {
				seen[s.Layer] = true
				rows = append(rows, s.Layer)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "LAYER")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s (µs/%s)", c.Name, c.Unit)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprint(tw, r)
		for _, c := range cols {
			cell := "-"
			for _, s := range c.Shares {
				if s.Layer == r {
					cell = fmt.Sprintf("%s (%.1f%%)", num(perUnit(s.CPU, c.Per)), 100*s.Fraction)
				}
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "total")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s (100%%)", num(perUnit(c.Total, c.Per)))
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

// num prints a figure with 3 significant digits at most, no exponent.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func perUnit(d time.Duration, n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(n)
}
