package cachelabtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/cachelab/cachelab/sim"
)

// tierWebhook is a Widget webhook that reads the API server through an
// uncached client (controller-runtime's mgr.GetAPIReader()), as real
// operators' webhooks do: the defaulter copies the size from the
// ConfigMap widget-defaults, the validator refuses a tier without a
// ConfigMap <tier>-tier.
type tierWebhook struct{ reader client.Reader }

func (h tierWebhook) Default(ctx context.Context, w *Widget) error {
	if w.Spec.Size != nil {
		return nil
	}
	var d corev1.ConfigMap
	if err := h.reader.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: "widget-defaults"}, &d); err != nil {
		return fmt.Errorf("reading widget-defaults: %w", err)
	}
	var size int32
	if _, err := fmt.Sscan(d.Data["size"], &size); err != nil {
		return fmt.Errorf("widget-defaults size %q: %w", d.Data["size"], err)
	}
	w.Spec.Size = &size
	return nil
}

func (h tierWebhook) validate(ctx context.Context, w *Widget) (admission.Warnings, error) {
	if w.Spec.Tier == "" {
		return nil, nil
	}
	var cm corev1.ConfigMap
	err := h.reader.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: w.Spec.Tier + "-tier"}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("tier %s has no ConfigMap %s-tier", w.Spec.Tier, w.Spec.Tier)
	}
	return nil, err
}

func (h tierWebhook) ValidateCreate(ctx context.Context, w *Widget) (admission.Warnings, error) {
	return h.validate(ctx, w)
}

func (h tierWebhook) ValidateUpdate(ctx context.Context, _, w *Widget) (admission.Warnings, error) {
	return h.validate(ctx, w)
}

func (tierWebhook) ValidateDelete(context.Context, *Widget) (admission.Warnings, error) {
	return nil, nil
}

// tierOperator is widgetOperator with the webhooks that read the server.
func tierOperator(t *testing.T, name string) Controller {
	c := widgetOperator(t, name, false, true)
	c.Setup = func(mgr ctrl.Manager) error {
		wh := tierWebhook{reader: mgr.GetAPIReader()}
		if err := ctrl.NewWebhookManagedBy(mgr, &Widget{}).WithDefaulter(wh).WithValidator(wh).Complete(); err != nil {
			return err
		}
		return ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).
			Complete(&widgetReconciler{Client: mgr.GetClient()})
	}
	return c
}

// tierPlan: the ConfigMaps standard-tier and widget-defaults (size 5) and
// Widget pre exist; the user creates Widget a at 1 s and Widget gold
// (tier gold, which has no ConfigMap) at 2 s. Every request takes 10 ms.
func tierPlan() *sim.Plan {
	p := widgetPlan("tiers")
	cm := func(name, data string) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"default"},"data":` + data + `}`)
	}
	p.Objects = append([]json.RawMessage{cm("standard-tier", `{}`), cm("widget-defaults", `{"size":"5"}`)}, p.Objects...)
	p.Steps[1].Object = json.RawMessage(`{"apiVersion":"webhooks.cachelab.dev/v1","kind":"Widget","metadata":{"name":"gold","namespace":"default"},"spec":{"tier":"gold"}}`)
	p.Faults = sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: sim.Duration(10 * time.Millisecond)}}
	return p
}

// TestAWebhookThatReadsTheServerIsAnsweredInTheLab: a controller-runtime
// operator whose defaulting and validating webhooks Get ConfigMaps
// through mgr.GetAPIReader() runs under the lab's scheduler (each
// request a ticket, the webhooks' own requests too): the defaulter's read
// is answered (pre and a get size 5), the reconciler's update to tier
// standard passes the validator's read, gold is refused with the
// webhook's own message, every verdict passes, and two runs of the plan
// release the same tickets in the same order.
func TestAWebhookThatReadsTheServerIsAnsweredInTheLab(t *testing.T) {
	c := tierOperator(t, "widget-tiers")
	tr := runWidgets(t, c, tierPlan())
	for _, name := range []string{"pre", "a"} {
		w := finalWidget(t, tr, name)
		if w == nil || sizeOf(w) != "5" || w.Spec.Tier != "standard" {
			t.Errorf("widget %s = %+v, want size 5 (read by the defaulter) and tier standard (admitted by the validator)", name, w)
		}
	}
	denied := `admission webhook "vwidget-v1.kb.io" denied the request: tier gold has no ConfigMap gold-tier`
	refused := slices.ContainsFunc(tr.Records, func(r sim.Record) bool {
		return r.Kind == sim.RecNote && strings.Contains(r.Detail, denied)
	})
	if !refused || finalWidget(t, tr, "gold") != nil {
		t.Errorf("widget gold: refused with %q: %v; stored: %v", denied, refused, finalWidget(t, tr, "gold") != nil)
	}
	// The same tickets in the same order; which object a handler turn
	// carries may differ (client-go hands a WatchList's objects over in
	// Go map order: docs/determinism.md), so the entries' objects are
	// left out (sim.ScheduleKeys).
	again := runWidgets(t, c, tierPlan())
	if !slices.Equal(sim.ScheduleKeys(tr.Schedule), sim.ScheduleKeys(again.Schedule)) {
		t.Errorf("two runs of the plan released different schedules:\n%s", sim.DiffDeliverySchedules(tr.Schedule, again.Schedule))
	}
	t.Chdir(t.TempDir()) // Catch writes a failing plan's files under testdata/
	if fs := Catch(t, c, These(tierPlan())); len(fs) != 0 {
		t.Errorf("the operator whose webhooks read the server failed: %v", failureNames(fs))
	}
}

// backgroundReader reads with context.Background(), not the context it is
// given: a webhook written so.
type backgroundReader struct{ client.Reader }

func (r backgroundReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.Reader.Get(context.Background(), key, obj, opts...)
}

// TestAWebhookReadingUnderAnotherContextDuringAUserStepEndsAtItsTimeout:
// the limit docs/controller-guide.md states. The user's steps are written
// by the run loop, which gives no turn while it writes: the defaulter's
// read made with context.Background() (not the call's context) waits for
// a turn until the webhook's 10 s timeout, and the create of a fails as a
// failed call (failurePolicy Fail). The reconciler's own writes, made on
// its goroutines, are admitted: the same webhook reading with the call's
// context (TestAWebhookThatReadsTheServerIsAnsweredInTheLab) is answered.
func TestAWebhookReadingUnderAnotherContextDuringAUserStepEndsAtItsTimeout(t *testing.T) {
	c := widgetOperator(t, "widget-tiers-background", false, true)
	c.Setup = func(mgr ctrl.Manager) error {
		wh := tierWebhook{reader: backgroundReader{mgr.GetAPIReader()}}
		if err := ctrl.NewWebhookManagedBy(mgr, &Widget{}).WithDefaulter(wh).WithValidator(wh).Complete(); err != nil {
			return err
		}
		return ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).
			Complete(&widgetReconciler{Client: mgr.GetClient()})
	}
	p := tierPlan()
	p.Objects = p.Objects[:2] // the ConfigMaps only: Widget pre would fail the run the same way
	p.Steps = p.Steps[:1]
	tr := runWidgets(t, c, p)
	failed := slices.IndexFunc(tr.Records, func(r sim.Record) bool {
		return r.Kind == sim.RecNote && strings.Contains(r.Detail, `step failed: Internal error occurred: failed calling webhook "mwidget-v1.kb.io"`) &&
			strings.Contains(r.Detail, "context deadline exceeded")
	})
	if failed < 0 || finalWidget(t, tr, "a") != nil {
		t.Fatalf("the create of a: failed at the webhook's timeout: %v; stored: %v", failed >= 0, finalWidget(t, tr, "a") != nil)
	}
	if at := tr.Records[failed].At.D(); at != 11*time.Second {
		t.Errorf("the create of a failed at %v, want 11s (the step at 1s, the webhook's 10s timeout)", at)
	}
}
