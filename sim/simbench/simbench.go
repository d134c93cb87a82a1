// Package simbench is the sim's standard benchmark scenario and its
// baseline, shared by sim's BenchmarkStandardScenario and `cachelab bench`.
//
// The standard scenario: 50 ConfigMaps, 200 operations by the user over 30
// virtual seconds (120 merge patches of the initial objects, 40 creates and
// 40 deletes of others), 3 broken watches, per-watch uniform latency of
// 1-50 ms, watched by the simtest/informer subject (one real
// SharedIndexInformer, a real workqueue and a worker) on the direct path or
// over HTTP.
//
// The baseline (FloorRun) plays the same timeline into the same real
// client-go components with everything else removed; Measure runs both in
// the same process, alternating, so the figures it reports are ratios
// against a baseline measured in the same run.
package simbench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/simtest"
)

// The standard scenario's shape.
const (
	// StandardObjects is the number of initial ConfigMaps.
	StandardObjects = 50
	// StandardOps is the number of API operations.
	StandardOps = 200
	// StandardSpan is the virtual time over which the operations spread.
	StandardSpan = 30 * time.Second
	// StandardQuiet is the plan's quiet period after the last activity.
	StandardQuiet = time.Second
)

// StandardBreaks are the virtual times of the 3 broken watches.
var StandardBreaks = []time.Duration{7500 * time.Millisecond, 15 * time.Second, 22500 * time.Millisecond}

// Op is one operation of the standard timeline.
type Op struct {
	// At is the operation's virtual time from the start of the run.
	At time.Duration
	// Op is "create", "patch", "delete" (of ConfigMap Name in namespace
	// default) or "break" (every watch of configmaps).
	Op   string
	Name string
	// Value is the value a patch sets for data key "i".
	Value string
}

// StandardTimeline returns the standard scenario's operations in time
// order (ties: operations before breaks, as in the plan's step order).
func StandardTimeline() []Op {
	step := StandardSpan / StandardOps
	var ops []Op
	for i := range StandardOps {
		op := Op{At: time.Duration(i+1) * step}
		switch {
		case i%5 == 3:
			op.Op, op.Name = "create", fmt.Sprintf("new%d", i)
		case i%5 == 4:
			op.Op, op.Name = "delete", fmt.Sprintf("new%d", i-1)
		default:
			op.Op, op.Name, op.Value = "patch", fmt.Sprintf("cm%d", i%StandardObjects), fmt.Sprint(i)
		}
		ops = append(ops, op)
	}
	for _, t := range StandardBreaks {
		i := 0
		for i < len(ops) && ops[i].At <= t {
			i++
		}
		ops = append(ops[:i], append([]Op{{At: t, Op: "break"}}, ops[i:]...)...)
	}
	return ops
}

func configMap(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"}}`, name))
}

// patchOf is the JSON merge patch setting data key "i" to value.
func patchOf(value string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"data":{"i":%q}}`, value))
}

// StandardPlan returns the standard scenario as a plan on access path
// access ("direct" or "http").
func StandardPlan(access string) *sim.Plan {
	p := &sim.Plan{Version: sim.PlanVersion, Name: "standard-benchmark", Seed: 7, Subject: simtest.Name, Access: access,
		Quiet: sim.Duration(StandardQuiet), Deadline: sim.Duration(time.Minute),
		Faults: sim.FaultPolicy{Latency: sim.Distribution{Kind: "uniform", Min: sim.Duration(time.Millisecond), Max: sim.Duration(50 * time.Millisecond)}}}
	for i := range StandardObjects {
		p.Objects = append(p.Objects, configMap(fmt.Sprintf("cm%d", i)))
	}
	// The breaks come last in the step list (ties in time are played in
	// list order, so a break at the time of an operation follows it).
	var ops, breaks []Op
	for _, op := range StandardTimeline() {
		if op.Op == "break" {
			breaks = append(breaks, op)
		} else {
			ops = append(ops, op)
		}
	}
	for _, op := range append(ops, breaks...) {
		s := sim.Step{At: sim.Duration(op.At), Actor: "user", Op: op.Op}
		switch op.Op {
		case "create":
			s.Object = configMap(op.Name)
		case "delete":
			s.Resource, s.Namespace, s.Name = "configmaps", "default", op.Name
		case "patch":
			s.Resource, s.Namespace, s.Name = "configmaps", "default", op.Name
			s.Patch = patchOf(op.Value)
		case "break":
			s.Actor, s.Resource = "faults", "configmaps"
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}
