package cachelabtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/sim"
)

// An initial object of the plan that the controller's validating webhook
// refuses is refused as in a cluster (a user's create the operator does
// not accept), noted in the trace, and the run goes on without it: random
// plans draw objects from the CRD's schema, which the webhook may refuse
// (H40: 2 of 50 of Kueue's plans failed as "run" before). Without the
// webhook the object is stored.
func TestAnInitialObjectTheWebhookRefusesIsNotedAndTheRunGoesOn(t *testing.T) {
	t.Chdir(t.TempDir())
	p := widgetPlan("initial-refused")
	p.Objects = append(p.Objects, json.RawMessage(`{"apiVersion":"webhooks.cachelab.dev/v1","kind":"Widget","metadata":{"name":"bad0","namespace":"default"},"spec":{"tier":"forbidden"}}`))
	p.Steps = p.Steps[:1]
	if fs := Catch(t, widgetOperator(t, "widget-initial-refused", false, true), These(p)); len(fs) != 0 {
		t.Fatalf("a plan whose initial object the webhook refuses failed: %v\n%s", failureNames(fs), fs[0].Report)
	}
	tr := runWidgets(t, widgetOperator(t, "widget-initial-refused-trace", false, true), p)
	noted := false
	for _, r := range tr.Records {
		if r.Kind == sim.RecNote && strings.Contains(r.Detail, "objects[1]") && strings.Contains(r.Detail, "denied the request") {
			noted = true
		}
	}
	if !noted {
		t.Errorf("no note in the trace says the webhook refused objects[1]")
	}
}
