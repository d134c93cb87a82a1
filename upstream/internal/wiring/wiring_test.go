package wiring

import (
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
