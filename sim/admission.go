package sim

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// ClientWebhooks is the client name of SubjectInfo.Webhooks' Env.
const ClientWebhooks = "webhooks"

// WebhookRouter routes a run's admission webhook calls, by URL path, to the
// handlers last given to Serve: a subject's process serves its webhooks
// from its start on (a crash does not take them away; the restarted
// process replaces them). A path with no handler is answered 404, which
// the API server reports as a failed webhook call (its failurePolicy
// decides). It is safe for concurrent use.
type WebhookRouter struct {
	mu       sync.Mutex
	handlers map[string]http.Handler
}

// Serve makes handlers (by path) answer the run's webhook calls from now on.
func (w *WebhookRouter) Serve(handlers map[string]http.Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers = handlers
}

// Paths returns the paths served, sorted.
func (w *WebhookRouter) Paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.handlers))
	for p := range w.handlers {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ServeHTTP answers one webhook call.
func (w *WebhookRouter) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	w.mu.Lock()
	h := w.handlers[req.URL.Path]
	w.mu.Unlock()
	if h == nil {
		http.Error(rw, fmt.Sprintf("no webhook is served at %s (served: %s)", req.URL.Path, strings.Join(w.Paths(), ", ")), http.StatusNotFound)
		return
	}
	h.ServeHTTP(rw, req)
}

// webhookRouterKey marks a run's context with its WebhookRouter.
type webhookRouterKey struct{}

// WebhookRouterOf returns the WebhookRouter of the run ctx belongs to (a
// subject's Start context, SubjectInfo.Webhooks'), nil if the run serves no
// webhooks.
func WebhookRouterOf(ctx context.Context) *WebhookRouter {
	w, _ := ctx.Value(webhookRouterKey{}).(*WebhookRouter)
	return w
}

// startWebhooks asks info.Webhooks, if any, for the run's webhook
// configurations, once, before the plan's objects are created, and gives
// them to the server with calls routed through the run's WebhookRouter
// (whose context every later process's inherits). Like startBeside, it
// runs the call on a goroutine while the run loop gives its requests
// their turns.
func (r *run) startWebhooks() error {
	if r.info.Webhooks == nil {
		return nil
	}
	router := &WebhookRouter{}
	r.ctx = context.WithValue(r.ctx, webhookRouterKey{}, router)
	name := ClientWebhooks
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	env, ctx := r.helperEnv(ctx, name)
	var err error
	var cfg struct {
		mutating, validating int
	}
	returned := r.callUntilDeadline(cancel, func() {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("panicked: %v", x)
			}
		}()
		w, werr := r.info.Webhooks(ctx, env)
		if werr != nil {
			err = werr
			return
		}
		cfg.mutating, cfg.validating = len(w.Mutating), len(w.Validating)
		w.Transport = fakehttp.NewPipe(router)
		err = r.srv.SetWebhooks(w)
	})
	if !returned {
		return fmt.Errorf("sim: subject %s: Webhooks did not return before the deadline %s", r.info.Name, r.plan.Deadline)
	}
	if err != nil {
		return fmt.Errorf("sim: subject %s: webhooks: %w", r.info.Name, err)
	}
	actorRecorder{r.rec, name}.Record(Record{Kind: RecNote, Detail: fmt.Sprintf("admission webhooks: %d mutating and %d validating configurations, served at %s",
		cfg.mutating, cfg.validating, strings.Join(router.Paths(), ", "))})
	return nil
}

// admissionDenied reports whether err is an admission webhook's denial,
// as kube-apiserver words it (k8s.io/apiserver's
// pkg/admission/plugin/webhook/errors/statuserror.go: `admission webhook
// "<name>" denied the request...`).
func admissionDenied(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "admission webhook ") && strings.Contains(msg, " denied the request")
}
