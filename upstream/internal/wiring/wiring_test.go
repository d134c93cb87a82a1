package wiring

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// A controller whose queue field was renamed or retyped upstream is an
// error naming the field, never a silent miss of its reconciles (env is
// not reached: the check comes first).
func TestRecordQueueRefusesAControllerWithoutItsQueue(t *testing.T) {
	type renamed struct {
		workQueue workqueue.TypedRateLimitingInterface[string]
	}
	type retyped struct {
		queue workqueue.TypedInterface[string]
	}
	for _, c := range []any{&renamed{}, &retyped{}, renamed{}, nil} {
		err := RecordQueue(c, nil)
		if err == nil || !strings.Contains(err.Error(), "cannot record its reconciles") {
			t.Errorf("RecordQueue(%T) = %v, want an error saying the lab cannot record its reconciles", c, err)
		}
	}
}

// idle is a Runner that runs nothing.
type idle struct{}

func (*idle) Run(context.Context, int) {}

// A controller is named by its gate: names[0] on, names[1] off.
func TestControllerIsNamedByItsGate(t *testing.T) {
	for on, want := range map[bool]string{true: "upstream/x", false: "upstream/x-nogate"} {
		if got := Controller[*idle]([2]string{"upstream/x", "upstream/x-nogate"}, "SomeGate", on, 1, nil, nil).Name; got != want {
			t.Errorf("gate %v: named %q, want %q", on, got, want)
		}
	}
}
