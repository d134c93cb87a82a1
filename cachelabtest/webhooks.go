package cachelabtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/sim"
)

// Webhooks are a controller's admission webhooks, served in the lab: the
// fake API server calls them on every write that matches their rules, as
// kube-apiserver calls an operator's webhooks (with kube-apiserver's own
// webhook admission code: see docs/controller-guide.md), in-process, with
// no TCP and no TLS.
//
// With Setup, the lab gives the manager a webhook server
// (manager.Options.WebhookServer) that records what the controller
// registers (ctrl.NewWebhookManagedBy(mgr, &X{}).WithDefaulter(d)
// .WithValidator(v), mgr.GetWebhookServer().Register(path, h)) instead of
// listening; a client-go controller gives Handlers. Which writes go to
// which path is said by the manifests (Manifests, Mutating, Validating),
// or, without any, by controller-runtime's builder path convention:
// /mutate-<group>-<version>-<kind> and /validate-<group>-<version>-<kind>
// (dots of the group as dashes) for the controller's kinds, on create and
// update, failurePolicy Fail, sideEffects None, as kubebuilder's scaffold
// marks them.
//
// The webhooks are served from the run's start: the lab calls Setup once
// before the plan's objects are created to learn them (the manager of that
// call is never started), so the plan's objects are admitted too; each
// process of the controller then serves its own from its start.
type Webhooks struct {
	// Manifests, optional, are files or folders (.yaml, .yml, .json;
	// not subfolders) holding MutatingWebhookConfiguration and
	// ValidatingWebhookConfiguration objects: a kubebuilder project's
	// config/webhook/manifests.yaml. Other kinds in them are skipped.
	Manifests []string
	// Mutating and Validating, optional, are configurations given as
	// objects, added to those of Manifests.
	Mutating   []admissionregistrationv1.MutatingWebhookConfiguration
	Validating []admissionregistrationv1.ValidatingWebhookConfiguration
	// Handlers, optional, serves paths with plain handlers (a client-go
	// controller's webhooks, or extra ones beside a manager's): the path
	// of a configuration's clientConfig (service.path, or url's path).
	// Answer an admission/v1 AdmissionReview; controller-runtime's
	// admission.Webhook is one.
	Handlers map[string]http.Handler
}

// webhookServer is the webhook.Server the lab gives a manager: it records
// the handlers registered and listens nowhere.
type webhookServer struct {
	mu       sync.Mutex
	handlers map[string]http.Handler
	mux      *http.ServeMux
}

var _ webhook.Server = (*webhookServer)(nil)

func newWebhookServer() *webhookServer {
	return &webhookServer{handlers: map[string]http.Handler{}, mux: http.NewServeMux()}
}

// NeedLeaderElection is false: webhooks serve in every replica.
func (s *webhookServer) NeedLeaderElection() bool { return false }

// Register records hook at path; a path registered twice panics, as
// controller-runtime's server does.
func (s *webhookServer) Register(path string, hook http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.handlers[path]; dup {
		panic(fmt.Errorf("can't register duplicate path: %v", path))
	}
	s.handlers[path] = hook
	s.mux.Handle(path, hook)
}

// Start serves nothing: the lab routes calls to the handlers. It returns
// when ctx ends.
func (s *webhookServer) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// StartedChecker is always healthy.
func (s *webhookServer) StartedChecker() healthz.Checker { return healthz.Ping }

// WebhookMux returns the mux of the registered handlers.
func (s *webhookServer) WebhookMux() *http.ServeMux { return s.mux }

// registered returns the handlers registered so far, with extra added.
func (s *webhookServer) registered(extra map[string]http.Handler) map[string]http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]http.Handler, len(s.handlers)+len(extra))
	for p, h := range s.handlers {
		out[p] = h
	}
	for p, h := range extra {
		out[p] = h
	}
	return out
}

// serveWebhooks makes handlers the run's webhooks from now on (a process
// start); without Controller.Webhooks the manager's registrations are
// noted and left uncalled.
func (s *subject) serveWebhooks(ctx context.Context, handlers map[string]http.Handler) {
	router := sim.WebhookRouterOf(ctx)
	if router == nil {
		if len(handlers) > 0 {
			paths := make([]string, 0, len(handlers))
			for p := range handlers {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			s.rec.record(sim.Record{Kind: sim.RecNote, Detail: "the controller registered admission webhooks (" + strings.Join(paths, ", ") +
				") that the lab does not call: set Controller.Webhooks to serve them"})
		}
		return
	}
	router.Serve(handlers)
}

// webhooksOf returns the run's webhook configurations for c and serves
// the handlers they need (SubjectInfo.Webhooks): Setup is called once on
// a manager that is never started, to learn what it registers.
func (c Controller) webhooksOf(ctx context.Context, env sim.Env) (fakeapi.Webhooks, error) {
	w := c.Webhooks
	handlers := map[string]http.Handler{}
	for p, h := range w.Handlers {
		handlers[p] = h
	}
	sch := c.Scheme
	if sch == nil {
		sch = scheme.Scheme
	}
	if c.Setup != nil {
		ws, err := c.registerWebhooks(env, sch)
		if err != nil {
			return fakeapi.Webhooks{}, err
		}
		handlers = ws.registered(w.Handlers)
	}
	if len(handlers) == 0 {
		return fakeapi.Webhooks{}, errors.New("cachelabtest: Controller.Webhooks is set, and the controller registers no webhook (Setup: ctrl.NewWebhookManagedBy(mgr, &X{})...Complete()) and gives no Webhooks.Handlers")
	}
	out := fakeapi.Webhooks{Mutating: slices.Clone(w.Mutating), Validating: slices.Clone(w.Validating)}
	for _, path := range w.Manifests {
		m, v, err := readWebhookManifests(path)
		if err != nil {
			return fakeapi.Webhooks{}, err
		}
		out.Mutating = append(out.Mutating, m...)
		out.Validating = append(out.Validating, v...)
	}
	if len(out.Mutating)+len(out.Validating) == 0 {
		var err error
		if out, err = conventionWebhooks(handlers, sch, c.CRDs); err != nil {
			return fakeapi.Webhooks{}, err
		}
	}
	if err := checkWebhookPaths(out, handlers); err != nil {
		return fakeapi.Webhooks{}, err
	}
	if err := checkWebhookResources(out, env); err != nil {
		return fakeapi.Webhooks{}, err
	}
	if router := sim.WebhookRouterOf(ctx); router != nil {
		router.Serve(handlers)
	}
	return out, nil
}

// registerWebhooks calls Setup on a manager that is never started and
// returns what it registered on the webhook server.
func (c Controller) registerWebhooks(env sim.Env, sch *runtime.Scheme) (ws *webhookServer, err error) {
	ws = newWebhookServer()
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("cachelabtest: Setup, called to learn the controller's webhooks, panicked: %v", x)
		}
	}()
	mgr, err := newLabManager(c, env, sch, nil, ws)
	if err != nil {
		return nil, err
	}
	var added []manager.Runnable
	mgr.learned = &added
	if err := c.Setup(mgr); err != nil {
		return nil, fmt.Errorf("cachelabtest: Setup, called to learn the controller's webhooks: %w", err)
	}
	// What Setup made for its runnables and only their Start releases (a
	// workqueue whose runnable shuts it down when its context ends, as
	// Kueue's requeuer does) is released: each runnable starts with its
	// context already ended, and returns. Left alone, its goroutines
	// outlived the run (every run ended "deadlock").
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	for _, run := range added {
		wg.Go(func() { _ = run.Start(ended) })
	}
	wg.Wait()
	return ws, nil
}

// readWebhookManifests reads the webhook configurations of a file or of a
// folder's manifest files.
func readWebhookManifests(path string) (mut []admissionregistrationv1.MutatingWebhookConfiguration, val []admissionregistrationv1.ValidatingWebhookConfiguration, err error) {
	files, err := manifestFiles(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cachelabtest: Webhooks.Manifests: %w", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("cachelabtest: Webhooks.Manifests: %w", err)
		}
		m, v, err := parseWebhookManifest(data)
		if err != nil {
			return nil, nil, fmt.Errorf("cachelabtest: Webhooks.Manifests: %s: %w", f, err)
		}
		mut, val = append(mut, m...), append(val, v...)
	}
	if len(mut)+len(val) == 0 {
		return nil, nil, fmt.Errorf("cachelabtest: Webhooks.Manifests: %s holds no MutatingWebhookConfiguration or ValidatingWebhookConfiguration", path)
	}
	return mut, val, nil
}

// parseWebhookManifest decodes the webhook configurations of one
// multi-document YAML or JSON file.
func parseWebhookManifest(data []byte) (mut []admissionregistrationv1.MutatingWebhookConfiguration, val []admissionregistrationv1.ValidatingWebhookConfiguration, err error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for i := 0; ; i++ {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return mut, val, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(raw.Raw, &tm); err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if tm.APIVersion != admissionregistrationv1.SchemeGroupVersion.String() {
			continue
		}
		switch tm.Kind {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(raw.Raw, &c); err != nil {
				return nil, nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
			}
			mut = append(mut, c)
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(raw.Raw, &c); err != nil {
				return nil, nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
			}
			val = append(val, c)
		}
	}
}

// conventionWebhooks configures a webhook for each handler whose path is
// controller-runtime's builder path of a kind of the controller's scheme
// or CRDs (generateMutatePath, generateValidatePath).
func conventionWebhooks(handlers map[string]http.Handler, sch *runtime.Scheme, crds CRDSet) (fakeapi.Webhooks, error) {
	type target struct {
		gvk      schema.GroupVersionKind
		resource string
	}
	byPath := map[string]target{}
	add := func(gvk schema.GroupVersionKind, resource string) {
		group := strings.ReplaceAll(gvk.Group, ".", "-")
		tail := group + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
		byPath["/mutate-"+tail] = target{gvk, resource}
		byPath["/validate-"+tail] = target{gvk, resource}
	}
	for gvk := range sch.AllKnownTypes() {
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		add(gvk, plural.Resource)
	}
	for _, c := range crds.served() {
		add(c.GVR.GroupVersion().WithKind(c.Kind), c.GVR.Resource)
	}
	paths := make([]string, 0, len(handlers))
	for p := range handlers {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out fakeapi.Webhooks
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	for _, p := range paths {
		t, ok := byPath[p]
		if !ok {
			return fakeapi.Webhooks{}, fmt.Errorf("cachelabtest: a webhook is registered at %s, which is not controller-runtime's builder path (/mutate-<group>-<version>-<kind>, /validate-...) of a kind of the controller's Scheme or CRDs: give its configuration (Controller.Webhooks.Manifests, e.g. config/webhook/manifests.yaml)", p)
		}
		u := "https://webhook-service.cachelab.svc" + p
		rules := []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{t.gvk.Group}, APIVersions: []string{t.gvk.Version}, Resources: []string{t.resource}},
		}}
		name := strings.ToLower(t.gvk.Kind) + "-" + t.gvk.Version + ".kb.io"
		cc := admissionregistrationv1.WebhookClientConfig{URL: &u}
		versions := []string{"v1"}
		if strings.HasPrefix(p, "/mutate-") {
			out.Mutating = append(out.Mutating, admissionregistrationv1.MutatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "m" + name},
				Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "m" + name, ClientConfig: cc, Rules: rules,
					FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: versions}}})
		} else {
			out.Validating = append(out.Validating, admissionregistrationv1.ValidatingWebhookConfiguration{
				ObjectMeta: metav1.ObjectMeta{Name: "v" + name},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v" + name, ClientConfig: cc, Rules: rules,
					FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: versions}}})
		}
	}
	return out, nil
}

// webhookPath is the path a webhook's clientConfig calls.
func webhookPath(cc admissionregistrationv1.WebhookClientConfig) (string, error) {
	switch {
	case cc.Service != nil:
		if cc.Service.Path == nil {
			return "/", nil
		}
		return *cc.Service.Path, nil
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return "", err
		}
		return u.Path, nil
	}
	return "", errors.New("clientConfig has neither service nor url")
}

// checkWebhookPaths says which configured webhook has no handler.
func checkWebhookPaths(w fakeapi.Webhooks, handlers map[string]http.Handler) error {
	served := make([]string, 0, len(handlers))
	for p := range handlers {
		served = append(served, p)
	}
	sort.Strings(served)
	check := func(kind, cfg, name string, cc admissionregistrationv1.WebhookClientConfig) error {
		p, err := webhookPath(cc)
		if err != nil {
			return fmt.Errorf("cachelabtest: %s %q webhook %q: %w", kind, cfg, name, err)
		}
		if handlers[p] == nil {
			return fmt.Errorf("cachelabtest: %s %q webhook %q calls %s, and no handler is registered there (registered: %s): register it in Setup (ctrl.NewWebhookManagedBy) or give Controller.Webhooks.Handlers",
				kind, cfg, name, p, strings.Join(served, ", "))
		}
		return nil
	}
	return eachWebhook(w, func(kind, cfg, name string, cc admissionregistrationv1.WebhookClientConfig, _ []admissionregistrationv1.RuleWithOperations) error {
		return check(kind, cfg, name, cc)
	})
}

// checkWebhookResources says which rule names a resource the server does
// not serve (wildcards match anything).
func checkWebhookResources(w fakeapi.Webhooks, env sim.Env) error {
	_, lists, err := env.Kube.Discovery().ServerGroupsAndResources()
	if err != nil {
		return fmt.Errorf("cachelabtest: webhooks: discovery: %w", err)
	}
	served := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			served[gv.WithResource(r.Name)] = true
		}
	}
	check := func(kind, cfg, name string, rules []admissionregistrationv1.RuleWithOperations) error {
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						if g == "*" || v == "*" || strings.Contains(res, "*") {
							continue
						}
						if !served[schema.GroupVersionResource{Group: g, Version: v, Resource: res}] {
							return fmt.Errorf("cachelabtest: %s %q webhook %q has a rule for %s, which the lab does not serve: add its CRD to Controller.CRDs (or fix the rule)",
								kind, cfg, name, schema.GroupVersionResource{Group: g, Version: v, Resource: res})
						}
					}
				}
			}
		}
		return nil
	}
	return eachWebhook(w, func(kind, cfg, name string, _ admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) error {
		return check(kind, cfg, name, rules)
	})
}

// eachWebhook calls f for every webhook of w, the mutating configurations'
// first, with its configuration's kind and name, its client config and
// its rules; the first error f returns ends the walk.
func eachWebhook(w fakeapi.Webhooks, f func(kind, cfg, name string, cc admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) error) error {
	for _, c := range w.Mutating {
		for _, h := range c.Webhooks {
			if err := f("MutatingWebhookConfiguration", c.Name, h.Name, h.ClientConfig, h.Rules); err != nil {
				return err
			}
		}
	}
	for _, c := range w.Validating {
		for _, h := range c.Webhooks {
			if err := f("ValidatingWebhookConfiguration", c.Name, h.Name, h.ClientConfig, h.Rules); err != nil {
				return err
			}
		}
	}
	return nil
}
