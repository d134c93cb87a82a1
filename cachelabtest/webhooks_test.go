package cachelabtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/sim"
)

// A small operator written from scratch, as kubebuilder scaffolds one:
// the Widget kind, a defaulting webhook (spec.size defaults to 3), a
// validating webhook (tier "forbidden" is refused), and a reconciler that
// gives every Widget the tier "standard" and a ConfigMap <name>-cfg
// holding its size.

var widgetGV = schema.GroupVersion{Group: "webhooks.cachelab.dev", Version: "v1"}

// Widget is the operator's kind.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec,omitempty"`
}

// WidgetSpec is Widget's spec.
type WidgetSpec struct {
	Size *int32 `json:"size,omitempty"`
	Tier string `json:"tier,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Size != nil {
		out.Spec.Size = ptr.To(*w.Spec.Size)
	}
	return &out
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &out
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.webhooks.cachelab.dev
spec:
  group: webhooks.cachelab.dev
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              size: {type: integer, format: int32}
              tier: {type: string}
`

func widgetScheme() *runtime.Scheme {
	sch := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(sch)
	sch.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(sch, widgetGV)
	return sch
}

// widgetWebhook is the operator's CustomDefaulter and CustomValidator.
type widgetWebhook struct{}

func (widgetWebhook) Default(_ context.Context, w *Widget) error {
	if w.Spec.Size == nil {
		w.Spec.Size = ptr.To[int32](3)
	}
	return nil
}

func (widgetWebhook) ValidateCreate(_ context.Context, w *Widget) (admission.Warnings, error) {
	return nil, validTier(w)
}

func (widgetWebhook) ValidateUpdate(_ context.Context, _, w *Widget) (admission.Warnings, error) {
	return nil, validTier(w)
}

func (widgetWebhook) ValidateDelete(context.Context, *Widget) (admission.Warnings, error) {
	return nil, nil
}

func validTier(w *Widget) error {
	if w.Spec.Tier == "forbidden" {
		return errors.New("tier forbidden is not allowed")
	}
	return nil
}

// widgetReconciler gives a Widget the tier "standard" and its ConfigMap.
// fights makes it write the spec it wants whole, without the size the
// defaulting webhook sets, whenever the stored spec differs, counting
// its syncs in an annotation: with the webhook it never agrees.
type widgetReconciler struct {
	client.Client
	fights bool
}

func (r *widgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-cfg"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"size": sizeOf(&w)}
		return controllerutil.SetControllerReference(&w, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if r.fights {
		want := WidgetSpec{Tier: "standard"}
		if w.Spec != want {
			w.Spec = want
			n, _ := strconv.Atoi(w.Annotations["syncs"])
			metav1.SetMetaDataAnnotation(&w.ObjectMeta, "syncs", strconv.Itoa(n+1))
			return ctrl.Result{}, r.Update(ctx, &w)
		}
	} else if w.Spec.Tier == "" {
		w.Spec.Tier = "standard"
		return ctrl.Result{}, r.Update(ctx, &w)
	}
	return ctrl.Result{}, nil
}

func sizeOf(w *Widget) string {
	if w.Spec.Size == nil {
		return "unset"
	}
	return strconv.Itoa(int(*w.Spec.Size))
}

// widgetOperator is the operator; withWebhooks serves its webhooks.
func widgetOperator(t *testing.T, name string, fights, withWebhooks bool) Controller {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "widgets.yaml"), []byte(widgetCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Controller{
		Name:   name,
		Scheme: widgetScheme(),
		CRDs:   CRDs(dir),
		Setup: func(mgr ctrl.Manager) error {
			if err := ctrl.NewWebhookManagedBy(mgr, &Widget{}).WithDefaulter(widgetWebhook{}).WithValidator(widgetWebhook{}).Complete(); err != nil {
				return err
			}
			return ctrl.NewControllerManagedBy(mgr).For(&Widget{}).Owns(&corev1.ConfigMap{}).
				Complete(&widgetReconciler{Client: mgr.GetClient(), fights: fights})
		},
		// Every Widget has the tier "standard" and a ConfigMap holding
		// its size.
		Desired: func(s *State) error {
			for _, w := range List[Widget](s, "") {
				cm, ok := Get[corev1.ConfigMap](s, w.Namespace, w.Name+"-cfg")
				if w.Spec.Tier != "standard" || !ok || cm.Data["size"] != sizeOf(w) {
					return fmt.Errorf("widget %s/%s is not reconciled", w.Namespace, w.Name)
				}
			}
			return nil
		},
	}
	if withWebhooks {
		c.Webhooks = &Webhooks{}
	}
	return c
}

// widgetPlan: the user creates Widget a (no size) at 1 s, and Widget bad
// (tier forbidden) at 2 s.
func widgetPlan(name string) *sim.Plan {
	widget := func(n, spec string) json.RawMessage {
		return json.RawMessage(`{"apiVersion":"webhooks.cachelab.dev/v1","kind":"Widget","metadata":{"name":"` + n + `","namespace":"default"},"spec":` + spec + `}`)
	}
	return &sim.Plan{Version: sim.PlanVersion, Name: name, Seed: 1,
		Objects: []json.RawMessage{widget("pre", `{}`)},
		Steps: []sim.Step{
			{At: sim.Duration(time.Second), Actor: "user", Op: "create", Object: widget("a", `{}`)},
			{At: sim.Duration(2 * time.Second), Actor: "user", Op: "create", Object: widget("bad", `{"tier":"forbidden"}`)},
		},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(10 * time.Second)}
}

// runWidgets runs plan p on c and returns the trace.
func runWidgets(t *testing.T, c Controller, p *sim.Plan) *sim.Trace {
	t.Helper()
	if err := sim.ReplaceSubject(c.subjectInfo("widgets")); err != nil {
		t.Fatal(err)
	}
	p.Subject = c.Name
	tr, err := lab.RunPlan(t, p)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// finalWidget returns the last stored state of Widget name in tr.
func finalWidget(t *testing.T, tr *sim.Trace, name string) *Widget {
	t.Helper()
	var last json.RawMessage
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Name == name && strings.HasPrefix(r.Resource, "widgets") && len(r.Object) > 0 {
			last = r.Object
		}
	}
	if last == nil {
		return nil
	}
	var w Widget
	if err := json.Unmarshal(last, &w); err != nil {
		t.Fatal(err)
	}
	return &w
}

// TestWebhooksOfAControllerRuntimeOperatorRunInTheLab: with Webhooks
// (&Webhooks{}: controller-runtime's path convention, no manifest), the
// defaulting webhook sets the size of the Widgets the plan creates (its
// initial object and a step's) and the validating webhook refuses the
// forbidden one with kube-apiserver's message; without Webhooks neither
// happens.
func TestWebhooksOfAControllerRuntimeOperatorRunInTheLab(t *testing.T) {
	denied := `admission webhook "vwidget-v1.kb.io" denied the request: tier forbidden is not allowed`
	for _, served := range []bool{true, false} {
		t.Run(fmt.Sprintf("webhooks=%v", served), func(t *testing.T) {
			tr := runWidgets(t, widgetOperator(t, "widgets-"+strconv.FormatBool(served), false, served), widgetPlan("widgets"))
			for _, name := range []string{"pre", "a"} {
				w := finalWidget(t, tr, name)
				if w == nil {
					t.Fatalf("widget %s never written", name)
				}
				if got, want := sizeOf(w), map[bool]string{true: "3", false: "unset"}[served]; got != want {
					t.Errorf("widget %s: size %s, want %s", name, got, want)
				}
			}
			refused := false
			for _, r := range tr.Records {
				if r.Kind == sim.RecNote && strings.Contains(r.Detail, denied) {
					refused = true
				}
			}
			stored := finalWidget(t, tr, "bad") != nil
			if served && (!refused || stored) {
				t.Errorf("the forbidden widget: refused with %q: %v; stored: %v", denied, refused, stored)
			}
			if !served && (refused || !stored) {
				t.Errorf("without webhooks the forbidden widget: refused %v, stored %v", refused, stored)
			}
		})
	}
}

// fightPlan: the user creates Widget a at 1 s; every request takes 10 ms.
func fightPlan() Plans {
	p := widgetPlan("fight")
	p.Objects = nil
	p.Steps = p.Steps[:1]
	p.Faults = sim.FaultPolicy{Latency: sim.Distribution{Kind: "fixed", Max: sim.Duration(10 * time.Millisecond)}}
	p.Deadline, p.Quiet = sim.Duration(20*time.Second), sim.Duration(5*time.Second)
	return These(p)
}

// TestAControllerThatFightsItsDefaultingWebhookFailsOnlyWithTheWebhook:
// the reconciler that writes its whole spec without the size the
// defaulting webhook sets updates the Widget forever when the webhook runs
// (stable-reconciliation fails), and passes in a lab without the webhook;
// the idiomatic reconciler, which writes only the field it owns, passes
// with the webhook.
func TestAControllerThatFightsItsDefaultingWebhookFailsOnlyWithTheWebhook(t *testing.T) {
	t.Chdir(t.TempDir()) // Catch and Test write a failing plan's files under testdata/
	fs := Catch(t, widgetOperator(t, "widget-fights", true, true), fightPlan())
	if !slices.Contains(failureNames(fs), "stable-reconciliation") {
		t.Errorf("the fighting controller with its webhook: failures %v, want stable-reconciliation", failureNames(fs))
	}
	if fs := Catch(t, widgetOperator(t, "widget-fights-nowebhook", true, false), fightPlan()); len(fs) != 0 {
		t.Errorf("the fighting controller without its webhook failed: %v", failureNames(fs))
	}
	Test(t, widgetOperator(t, "widget-idiomatic", false, true), fightPlan())
}

// failureNames lists the failed verdicts of fs.
func failureNames(fs []*Failure) []string {
	var out []string
	for _, f := range fs {
		for _, v := range f.Failed {
			out = append(out, v.Invariant)
		}
	}
	return out
}

// widgetManifests is what kubebuilder's controller-gen writes to
// config/webhook/manifests.yaml for the Widget webhooks (service
// clientConfig), with the validating webhook also on delete.
const widgetManifests = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-webhooks-cachelab-dev-v1-widget}
  failurePolicy: Fail
  name: mwidget-v1.kb.io
  rules:
  - apiGroups: [webhooks.cachelab.dev]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [widgets]
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-webhooks-cachelab-dev-v1-widget}
  failurePolicy: Fail
  name: vwidget-v1.kb.io
  rules:
  - apiGroups: [webhooks.cachelab.dev]
    apiVersions: [v1]
    operations: [CREATE, UPDATE, DELETE]
    resources: [widgets]
  sideEffects: None
`

// TestWebhookManifestsRouteCallsAndWrongInputIsAClearError: a
// kubebuilder manifests.yaml routes the calls to the handlers Setup
// registered; a manifest calling a path nobody serves, a rule for a
// resource the lab does not serve, a handler at a path that is not the
// builder's without a manifest, and Webhooks with no webhook at all are
// errors of the run that say what to do.
func TestWebhookManifestsRouteCallsAndWrongInputIsAClearError(t *testing.T) {
	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "manifests.yaml")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := widgetOperator(t, "widgets-manifests", false, true)
	c.Webhooks.Manifests = []string{write(widgetManifests)}
	tr := runWidgets(t, c, widgetPlan("manifests"))
	if w := finalWidget(t, tr, "a"); w == nil || sizeOf(w) != "3" {
		t.Errorf("with the manifests, widget a = %+v, want size 3", w)
	}
	for _, tc := range []struct {
		name  string
		setup func(c *Controller)
		want  string
	}{
		{"no handler", func(c *Controller) {
			c.Webhooks.Manifests = []string{write(strings.ReplaceAll(widgetManifests, "/mutate-webhooks-cachelab-dev-v1-widget", "/mutate-gone"))}
		}, `calls /mutate-gone, and no handler is registered there`},
		{"unserved resource", func(c *Controller) {
			c.Webhooks.Manifests = []string{write(strings.ReplaceAll(widgetManifests, "resources: [widgets]", "resources: [gadgets]"))}
		}, `has a rule for webhooks.cachelab.dev/v1, Resource=gadgets, which the lab does not serve`},
		{"path off the convention", func(c *Controller) {
			c.Webhooks.Handlers = map[string]http.Handler{"/hand-made": http.NotFoundHandler()}
		}, `registered at /hand-made, which is not controller-runtime's builder path`},
		{"nothing to serve", func(c *Controller) {
			setup := c.Setup
			c.Setup = func(mgr ctrl.Manager) error { _ = setup; return nil }
		}, `registers no webhook`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := widgetOperator(t, "widgets-bad-"+strings.ReplaceAll(tc.name, " ", "-"), false, true)
			tc.setup(&c)
			if err := sim.ReplaceSubject(c.subjectInfo("widgets")); err != nil {
				t.Fatal(err)
			}
			p := widgetPlan("bad")
			p.Subject = c.Name
			_, err := lab.RunPlan(t, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestAClientGoControllerGivesPlainHandlers: a client-go controller serves
// a webhook with a plain handler (admission.HandlerFunc) under a
// configuration given as an object; the ConfigMaps the plan creates get
// the label it adds, and a Start controller with nothing else to do sees
// them labelled.
func TestAClientGoControllerGivesPlainHandlers(t *testing.T) {
	label := admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		var cm corev1.ConfigMap
		if err := json.Unmarshal(req.Object.Raw, &cm); err != nil {
			return admission.Errored(400, err)
		}
		metav1.SetMetaDataLabel(&cm.ObjectMeta, "admitted-by", req.UserInfo.Username)
		raw, _ := json.Marshal(&cm)
		return admission.PatchResponseFromRaw(req.Object.Raw, raw)
	})
	url := "https://labeller.example.com/label"
	none := admissionregistrationv1.SideEffectClassNone
	c := Controller{
		Name:  "labelled",
		Start: func(ctx context.Context, env *Env) error { return nil },
		Webhooks: &Webhooks{
			Handlers: map[string]http.Handler{"/label": &admission.Webhook{Handler: label}},
			Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "labeller"},
				Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "labeller.example.com",
					ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url}, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
					Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}}}},
		},
	}
	p := &sim.Plan{Version: sim.PlanVersion, Name: "labelled", Seed: 1,
		Objects: []json.RawMessage{json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}}`)},
		Steps: []sim.Step{{At: sim.Duration(time.Second), Actor: "user", Op: "create",
			Object: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"default"}}`)}},
		Deadline: sim.Duration(time.Minute), Quiet: sim.Duration(5 * time.Second)}
	tr := runWidgets(t, c, p)
	got := map[string]string{}
	for _, r := range tr.Records {
		if r.Kind == sim.RecWrite && r.Resource == "configmaps" {
			var cm corev1.ConfigMap
			if err := json.Unmarshal(r.Object, &cm); err != nil {
				t.Fatal(err)
			}
			got[cm.Name] = cm.Labels["admitted-by"]
		}
	}
	// The plan's initial objects are written by the client "setup", its
	// steps by "user".
	if want := map[string]string{"a": sim.ClientSetup, "b": "user"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("admitted-by labels = %v, want %v", got, want)
	}
}
