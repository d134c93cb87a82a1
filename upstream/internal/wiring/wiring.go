// Package wiring holds what the upstream subjects share to put a real
// kube-controller-manager controller under the lab: setting its KEP-5647
// feature gate for the one controller being built, and recording the
// reconciles of its unexported workqueue.
package wiring

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/featuregate"

	"github.com/cachelab/cachelab/cachelabtest"
)

// gateMu serializes setting the process-wide feature gates and building a
// controller, which reads them once, in its constructor.
var gateMu sync.Mutex

// WithGate sets the feature gate to on and runs build while no other
// controller is being built, so that build's constructor reads on. Runs in
// parallel bubbles build their controllers one at a time.
func WithGate[T any](gate featuregate.Feature, on bool, build func() (T, error)) (T, error) {
	gateMu.Lock()
	defer gateMu.Unlock()
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(gate): on}); err != nil {
		var zero T
		return zero, fmt.Errorf("setting the feature gate %s: %w", gate, err)
	}
	return build()
}

// RecordQueue replaces the controller's unexported field "queue" (a
// workqueue made in its constructor, still empty: no informer has started)
// with the same queue wrapped by cachelabtest.RecordQueue, so that the trace
// holds each reconcile's start, which no-duplicate-children and
// read-your-writes read. The controllers offer no hook for their queue,
// hence reflect and unsafe; a change of the field's name or type is an
// error, not a silent miss. controller is a pointer to the struct.
func RecordQueue(controller any, env *cachelabtest.Env) error {
	v := reflect.ValueOf(controller)
	want := reflect.TypeFor[workqueue.TypedRateLimitingInterface[string]]()
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%T is not a pointer to a controller struct: the lab cannot record its reconciles", controller)
	}
	f := v.Elem().FieldByName("queue")
	if !f.IsValid() || f.Type() != want {
		return fmt.Errorf("%T has no field queue of type %v: the lab cannot record its reconciles", controller, want)
	}
	p := (*workqueue.TypedRateLimitingInterface[string])(unsafe.Pointer(f.UnsafeAddr()))
	*p = cachelabtest.RecordQueue(env, *p)
	return nil
}

// Runner is a kube-controller-manager controller: Run blocks, running
// workers, until ctx ends.
type Runner interface {
	Run(ctx context.Context, workers int)
}

// Controller is the lab controller of the upstream controller
// newController makes, named names[0] with the gate on and names[1] with
// it off: built with gate set to on (WithGate), its queue recorded
// (RecordQueue), then run with workers once the informer factory has
// started. An error of any step fails the run's start, prefixed with the
// name.
func Controller[T Runner](names [2]string, gate featuregate.Feature, on bool, workers int,
	newController func(ctx context.Context, env *cachelabtest.Env) (T, error), desired func(*cachelabtest.State) error) cachelabtest.Controller {
	name := names[0]
	if !on {
		name = names[1]
	}
	return cachelabtest.Controller{
		Name: name,
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			c, err := WithGate(gate, on, func() (T, error) { return newController(ctx, env) })
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if err := RecordQueue(c, env); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			env.Informers.Start(ctx.Done())
			go c.Run(ctx, workers)
			return nil
		},
		Desired: desired,
	}
}
