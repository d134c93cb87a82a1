// Package lws puts LeaderWorkerSet's controller (sigs.k8s.io/lws v0.8.0),
// an operator nobody here wrote, under the lab with the real cluster
// around it (upstream/cluster.Beside: kube-controller-manager v1.37.1's
// StatefulSet, Deployment, ReplicaSet and Job controllers and its garbage
// collector), so that the leader and worker StatefulSets it applies make
// Pods, the lab's kubelet actor makes them Ready and its status counts
// them, as in a cluster.
//
// LWS's main.go also serves two admission webhooks. The lab can serve an
// operator's webhooks (cachelabtest.Controller.Webhooks, through
// kube-apiserver's own webhook admission code), but not LWS's: its
// pkg/webhooks does not build with controller-runtime v0.25 (below). LWS
// relies on both:
//
//   - the LeaderWorkerSet defaulter fills spec.rolloutStrategy's
//     rollingUpdateConfiguration, which the reconciler dereferences; the
//     CRD's own defaults do not create it. The plans' objects
//     (samples/lws.yaml) carry the defaulted fields.
//   - the Pod defaulter labels each leader Pod with its group index and
//     group hash and each worker Pod with its worker index (the
//     StatefulSet controller creates them without); without them the
//     reconcilers fail on every Pod. AdmitPods applies that defaulting to
//     every Pod create the cluster's controllers send, before the server
//     sees it, as kube-apiserver's mutating admission would. LWS's own
//     defaulter (pkg/webhooks, PodWebhook.Default) cannot be called: the
//     package does not build with controller-runtime v0.25
//     (ctrl.NewWebhookManagedBy now takes the object), so AdmitPods
//     redoes its common path with LWS's exported helpers (see
//     defaultPod).
package lws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	leaderworkerset "sigs.k8s.io/lws/api/leaderworkerset/v1"
	"sigs.k8s.io/lws/pkg/controllers"
	"sigs.k8s.io/lws/pkg/utils"
	podutils "sigs.k8s.io/lws/pkg/utils/pod"
	statefulsetutils "sigs.k8s.io/lws/pkg/utils/statefulset"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/upstream/cluster"
)

// Module is LWS's Go module; its config/crd/bases holds the CRD.
const Module = "sigs.k8s.io/lws"

// Scheme returns client-go's scheme with LWS's API types.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = leaderworkerset.AddToScheme(s)
	return s
}

// Setup registers LWS's reconcilers on mgr as its cmd/main.go does: the
// StatefulSet owner index, the LeaderWorkerSet reconciler and the Pod
// reconciler, with no gang-scheduling provider (main.go's default) and
// no webhooks (LWS's do not build with controller-runtime v0.25: see the
// package comment).
func Setup(mgr ctrl.Manager) error {
	if err := controllers.SetupIndexes(mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("lws: indexes: %w", err)
	}
	if err := controllers.NewLeaderWorkerSetReconciler(mgr.GetClient(), mgr.GetScheme(), mgr.GetEventRecorderFor("leaderworkerset")).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("lws: LeaderWorkerSet reconciler: %w", err)
	}
	if err := controllers.NewPodReconciler(mgr.GetClient(), mgr.GetScheme(), mgr.GetEventRecorderFor("leaderworkerset"), nil).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("lws: Pod reconciler: %w", err)
	}
	return nil
}

// Controller returns LWS under the lab: named "lws", its CRD read from
// crdDir (the module's config/crd/bases), Setup, Desired, and the
// cluster beside it (cluster.Beside, its garbage collector included),
// whose Pod creates pass through LWS's Pod defaulter (AdmitPods).
func Controller(crdDir string) cachelabtest.Controller {
	c := cachelabtest.Controller{
		Name:    "lws",
		Scheme:  Scheme(),
		CRDs:    cachelabtest.CRDs(crdDir),
		Setup:   Setup,
		Desired: Desired,
		Expect: []cachelabtest.Expectation{{Invariant: "no-panics", Reason: "F1 (docs/real-operators.md): LWS v0.8.0 dereferences " +
			"spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize unchecked (leaderworkerset_controller.go:747; its validating webhook too), " +
			"which its CRD lets a set leave out; every Reconcile of such a set panics"},
			{Invariant: "stable-reconciliation", Reason: "V and F2 (docs/real-operators.md): a set whose StatefulSet the server refuses " +
				"(its pod or volume claim template invalid: LWS's webhook does not check them) is retried with backoff for ever, as in a cluster, " +
				"and each retry before the leader StatefulSet exists creates one more ControllerRevision (F2)"}},
		// cluster.Beside starts the cluster on env once this returns.
		Beside: func(_ context.Context, env *cachelabtest.Env) error {
			env.RESTConfig = AdmitPods(env.RESTConfig)
			return nil
		},
	}
	return cluster.Beside(c)
}

// ModuleDir returns where the go command keeps LWS's module (its CRDs and
// samples), as `go list -m` finds it from the working directory's module.
func ModuleDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module).Output()
	if err != nil {
		return "", fmt.Errorf("lws: go list -m %s: %w", Module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// AdmitPods returns a copy of cfg whose clients pass every Pod create
// (POST /api/v1/namespaces/<ns>/pods) through LWS's Pod defaulting
// (defaultPod) before the server sees it, as kube-apiserver's mutating
// admission calls LWS's webhook: a Pod that carries LWS's set-name label
// gets its group or worker index labels (and the environment variables
// LWS injects); one the defaulting refuses is answered 403, as a denied
// admission. Other requests pass unchanged.
func AdmitPods(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	inner := c.WrapTransport
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return admitPods{rt: rt}
	}
	return c
}

// admitPods is AdmitPods's transport.
type admitPods struct{ rt http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (a admitPods) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || !isPodCreate(req.URL.Path) {
		return a.rt.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	pod, ok := obj.(*corev1.Pod)
	if err != nil || !ok {
		return a.rt.RoundTrip(out) // the server answers what it cannot decode
	}
	if err := defaultPod(pod); err != nil {
		return denied(req, pod, err)
	}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	if body, err = json.Marshal(pod); err != nil {
		return nil, fmt.Errorf("lws: encoding the admitted pod: %w", err)
	}
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.Header.Set("Content-Type", "application/json")
	return a.rt.RoundTrip(out)
}

// isPodCreate says whether path is a namespace's pods collection.
func isPodCreate(path string) bool {
	p := strings.Split(strings.Trim(path, "/"), "/")
	n := len(p)
	return n >= 5 && p[n-5] == "api" && p[n-4] == "v1" && p[n-3] == "namespaces" && p[n-1] == "pods"
}

// denied answers a create the defaulter refused, as kube-apiserver answers
// a denied admission: 403 with a metav1.Status.
func denied(req *http.Request, pod *corev1.Pod, err error) (*http.Response, error) {
	st := apierrors.NewForbidden(corev1.Resource("pods"), pod.Name,
		errors.New(`admission webhook "mpod.lws.x-k8s.io" denied the request: `+err.Error())).Status()
	st.APIVersion, st.Kind = "v1", "Status"
	body, mErr := json.Marshal(st)
	if mErr != nil {
		return nil, mErr
	}
	return &http.Response{
		StatusCode: http.StatusForbidden, Status: "403 Forbidden", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}, nil
}

// defaultPod is the common path of LWS v0.8.0's Pod defaulter
// (pkg/webhooks/pod_webhook.go, PodWebhook.Default), with LWS's exported
// helpers: a Pod with LWS's set-name label must carry the size
// annotation; a leader Pod (worker index 0) gets its group index (its
// ordinal in the leader StatefulSet), its subdomain under
// UniquePerReplica, and its group hash (sha1 of namespace/name); a worker
// Pod gets its worker index (its ordinal in the worker StatefulSet); both
// get LWS's environment variables. Left out, as the plans do not use
// them: exclusive-placement affinities, sub-groups, TPU variables, gang
// scheduling (no provider, main.go's default).
func defaultPod(pod *corev1.Pod) error {
	if _, ok := pod.Labels[leaderworkerset.SetNameLabelKey]; !ok {
		return nil
	}
	if _, ok := pod.Annotations[leaderworkerset.SizeAnnotationKey]; !ok {
		return fmt.Errorf("size annotation is unexpectedly missing for pod %s", pod.Name)
	}
	_, ordinal := statefulsetutils.GetParentNameAndOrdinal(pod.Name)
	if ordinal == -1 {
		return fmt.Errorf("parsing pod ordinal for pod %s", pod.Name)
	}
	if podutils.LeaderPod(*pod) {
		if _, ok := pod.Labels[leaderworkerset.GroupIndexLabelKey]; !ok {
			pod.Labels[leaderworkerset.GroupIndexLabelKey] = strconv.Itoa(ordinal)
		}
		if pod.Annotations[leaderworkerset.SubdomainPolicyAnnotationKey] == string(leaderworkerset.SubdomainUniquePerReplica) {
			pod.Spec.Subdomain = pod.Name
		}
		if _, ok := pod.Labels[leaderworkerset.GroupUniqueHashLabelKey]; !ok {
			pod.Labels[leaderworkerset.GroupUniqueHashLabelKey] = utils.Sha1Hash(pod.Namespace + "/" + pod.Name)
		}
	} else {
		pod.Labels[leaderworkerset.WorkerIndexLabelKey] = strconv.Itoa(ordinal)
	}
	return podutils.AddLWSVariables(pod)
}
