// Package controller holds the WebApp reconciler, in kubebuilder's layout
// (internal/controller/<kind>_controller.go), and its planted bugs: one
// of each of Sieve's three classes (stale, unobserved and intermediate
// state), selected by WebAppReconciler.Bug.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	webappv1alpha1 "github.com/cachelab/cachelab/examples/webapp/api/v1alpha1"
)

// Names the reconciler writes.
const (
	// Finalizer holds a terminating WebApp until its children are torn
	// down in order (the Service first, so that no traffic reaches Pods
	// on their way out).
	Finalizer = "webapp.cachelab.dev/teardown"
	// ConfigHashAnnotation, on the Deployment's Pod template and on the
	// ConfigMap, is the hash of the configuration: a new hash rolls the
	// Pods, so that they read the new configuration.
	ConfigHashAnnotation = "webapp.cachelab.dev/config-hash"
	// ConditionAvailable is true when every wanted replica is available.
	ConditionAvailable = "Available"
	// Image is the application's image; the tag is spec.version.
	Image = "registry.example/webapp"
)

// Bug names one planted bug, one of each of Sieve's classes (OSDI'22,
// "Automatic reliability testing for cluster management controllers").
// The zero value is the correct reconciler.
type Bug string

// The planted bugs.
const (
	// NoBug is the correct reconciler.
	NoBug Bug = ""

	// StaleDelete (stale state) tears a terminating WebApp's children
	// down by name: it deletes the Service, Deployment and ConfigMap
	// named after the WebApp without checking that they are controlled
	// by that WebApp's UID (and without a UID precondition). After a
	// restart onto an API server that is behind, the cache still shows a
	// deleted predecessor with its deletionTimestamp while a successor of
	// the same name already has children: the reconciler deletes the
	// successor's children. It recreates them once its cache catches up,
	// so the end state is right; the harm is the delete of a live
	// owner's child (a rolled-back Deployment, a Service gone for a
	// while). Sieve's stale-state bugs in the cassandra, mongodb and
	// zookeeper operators have this shape.
	StaleDelete Bug = "stale-delete"

	// ScaleOnObservedChange (unobserved state) scales the Deployment only
	// when it has seen spec.replicas change: it remembers, per WebApp UID
	// and per process, the last spec.replicas it acted on, and a process
	// that meets a WebApp for the first time takes its Deployment's
	// replicas as already right (it sets them only when it creates the
	// Deployment). A change the process never saw (made while the
	// controller was down: its restart lists only the final spec) is
	// never applied. Sieve's unobserved-state bugs (a scale-down the
	// operator never saw, so never decommissioned) have this shape: logic
	// that computes the next state from the previous observed one.
	ScaleOnObservedChange Bug = "scale-on-observed-change"

	// RollOnConfigWrite (intermediate state) rolls the Deployment's Pods
	// to a new configuration (its Pod template's config-hash annotation)
	// only in the reconcile that wrote the new ConfigMap, as if the two
	// writes were one. When that reconcile stops between them (the
	// Deployment write fails or times out, or the process crashes), the
	// next one finds the ConfigMap already right and leaves the
	// Deployment on the old hash: its Pods never restart with the new
	// configuration. Sieve's intermediate-state bugs (the StatefulSet
	// updated, its ConfigMap not, never repaired) have this shape.
	RollOnConfigWrite Bug = "roll-on-config-write"
)

// Bugs lists the planted bugs.
var Bugs = []Bug{StaleDelete, ScaleOnObservedChange, RollOnConfigWrite}

// WebAppReconciler keeps, for every WebApp, a ConfigMap of its
// configuration, a Deployment of its version and a Service in front of
// it, all controlled by it, and reports the Deployment's progress in the
// WebApp's status.
type WebAppReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// APIReader reads from the API server, not the cache: before it
	// creates a child, the reconciler checks there that the WebApp it
	// read from the cache is still alive (see errOwnerGone).
	APIReader client.Reader
	// Scheme knows the WebApp types (for ownerReferences).
	Scheme *runtime.Scheme

	// Bug, optional, plants one bug (see Bug); default none.
	Bug Bug

	// mu guards scaled.
	mu sync.Mutex
	// scaled is, for ScaleOnObservedChange, the spec.replicas this process
	// last set on each WebApp's Deployment, by WebApp UID.
	scaled map[types.UID]int32
}

// +kubebuilder:rbac:groups=webapp.cachelab.dev,resources=webapps,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=webapp.cachelab.dev,resources=webapps/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=webapp.cachelab.dev,resources=webapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;configmaps,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings the children of the WebApp req names to its spec, and
// its status to what the Deployment reports.
func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app webappv1alpha1.WebApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // the garbage collector removes its children
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.teardown(ctx, &app)
	}
	if !controllerutil.ContainsFinalizer(&app, Finalizer) {
		// A patch of the finalizers alone, not an Update of the whole
		// object: the typed object drops fields that are empty
		// (greeting: "" with omitempty), which the server would then
		// default, undoing the user's change (found by the lab: a plan
		// that emptied the greeting before the finalizer was added).
		base := app.DeepCopy()
		controllerutil.AddFinalizer(&app, Finalizer)
		if err := r.Patch(ctx, &app, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, err
		}
	}

	data := ConfigData(&app)
	hash := ConfigHash(data)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: ConfigMapName(&app)}}
	cmOp, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		if err := r.checkOwnerAlive(ctx, &app, cm); err != nil {
			return err
		}
		cm.Data = data
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, ConfigHashAnnotation, hash)
		return controllerutil.SetControllerReference(&app, cm, r.Scheme)
	})
	if errors.Is(err, errOwnerGone) {
		return ctrl.Result{RequeueAfter: time.Second}, nil // the cache will show what replaced it
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("configmap: %w", err)
	}

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	depOp, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		if err := r.checkOwnerAlive(ctx, &app, dep); err != nil {
			return err
		}
		r.mutateDeployment(&app, dep, hash, cmOp != controllerutil.OperationResultNone)
		return controllerutil.SetControllerReference(&app, dep, r.Scheme)
	})
	if errors.Is(err, errOwnerGone) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment: %w", err)
	}
	r.rememberScale(&app)

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	svcOp, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		if err := r.checkOwnerAlive(ctx, &app, svc); err != nil {
			return err
		}
		mutateService(&app, svc)
		return controllerutil.SetControllerReference(&app, svc, r.Scheme)
	})
	if errors.Is(err, errOwnerGone) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("service: %w", err)
	}

	if err := r.writeStatus(ctx, &app, dep); err != nil {
		return ctrl.Result{}, err
	}
	if cmOp == controllerutil.OperationResultCreated || depOp == controllerutil.OperationResultCreated || svcOp == controllerutil.OperationResultCreated {
		// Come back until the cache has seen the new child: a child
		// deleted before the cache ever saw it (its watch held, then ended
		// with 410) gives no event after the relist, so nothing else would
		// bring this WebApp back (found by the lab on secretsync).
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// mutateDeployment sets what the reconciler owns of dep: the selector
// (on create only: it is immutable), replicas, the Pod template's labels,
// config hash and container. configWritten says whether this reconcile
// wrote the ConfigMap.
func (r *WebAppReconciler) mutateDeployment(app *webappv1alpha1.WebApp, dep *appsv1.Deployment, hash string, configWritten bool) {
	labels := Labels(app)
	created := dep.ResourceVersion == "" // CreateOrUpdate found none: it creates dep
	if created {
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	}
	if created || r.Bug != ScaleOnObservedChange || r.sawScale(app) {
		dep.Spec.Replicas = ptrTo(Replicas(app))
	}
	tmpl := &dep.Spec.Template
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	for k, v := range labels {
		tmpl.Labels[k] = v
	}
	if created || r.Bug != RollOnConfigWrite || configWritten {
		metav1.SetMetaDataAnnotation(&tmpl.ObjectMeta, ConfigHashAnnotation, hash)
	}
	var c *corev1.Container
	for i := range tmpl.Spec.Containers {
		if tmpl.Spec.Containers[i].Name == "app" {
			c = &tmpl.Spec.Containers[i]
		}
	}
	if c == nil {
		tmpl.Spec.Containers = append(tmpl.Spec.Containers, corev1.Container{Name: "app"})
		c = &tmpl.Spec.Containers[len(tmpl.Spec.Containers)-1]
	}
	c.Image = Image + ":" + app.Spec.Version
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: app.Spec.Port, Protocol: corev1.ProtocolTCP}}
	c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(app)}}}}
}

// errOwnerGone says that a child was not created because the WebApp the
// reconcile read from the cache is gone from the API server (deleted, or
// replaced by a successor of the same name).
var errOwnerGone = errors.New("webapp: the WebApp read from the cache is gone")

// checkOwnerAlive returns errOwnerGone when child is about to be created
// (it has no resourceVersion: CreateOrUpdate found none in the cache) for
// an app that the API server no longer holds under that UID. A cache that
// lags behind a delete, or a delete and recreate, still shows the old
// WebApp; a child created for it has a dead owner, which the garbage
// collector deletes at once, and the next reconcile, from the same lagging
// cache, would create it again, in a loop, until the cache caught up. One
// read from the API server per create breaks the loop.
func (r *WebAppReconciler) checkOwnerAlive(ctx context.Context, app *webappv1alpha1.WebApp, child client.Object) error {
	if child.GetResourceVersion() != "" {
		return nil
	}
	var live webappv1alpha1.WebApp
	err := r.liveReader().Get(ctx, client.ObjectKeyFromObject(app), &live)
	switch {
	case apierrors.IsNotFound(err):
		return errOwnerGone
	case err != nil:
		return err
	case live.UID != app.UID || !live.DeletionTimestamp.IsZero():
		return errOwnerGone
	}
	return nil
}

// sawScale reports, for ScaleOnObservedChange, whether this process has
// seen app's spec.replicas change since it last set its Deployment's.
func (r *WebAppReconciler) sawScale(app *webappv1alpha1.WebApp) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	last, ok := r.scaled[app.UID]
	return ok && last != Replicas(app)
}

// rememberScale records, after a successful Deployment write, the
// spec.replicas it was made from (for ScaleOnObservedChange).
func (r *WebAppReconciler) rememberScale(app *webappv1alpha1.WebApp) {
	if r.Bug != ScaleOnObservedChange {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scaled == nil {
		r.scaled = map[types.UID]int32{}
	}
	r.scaled[app.UID] = Replicas(app)
}

// mutateService sets what the reconciler owns of svc: its selector and
// its one port.
func mutateService(app *webappv1alpha1.WebApp, svc *corev1.Service) {
	svc.Spec.Selector = Labels(app)
	svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: app.Spec.Port, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}
}

// writeStatus writes app's status from its Deployment, if it changed.
func (r *WebAppReconciler) writeStatus(ctx context.Context, app *webappv1alpha1.WebApp, dep *appsv1.Deployment) error {
	st := app.Status.DeepCopy()
	st.ObservedGeneration = app.Generation
	st.Replicas = dep.Status.Replicas
	st.AvailableReplicas = dep.Status.AvailableReplicas
	st.Selector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: Labels(app)})
	st.ConfigHash = dep.Spec.Template.Annotations[ConfigHashAnnotation]
	cond := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionFalse, Reason: "ReplicasUnavailable",
		Message: fmt.Sprintf("%d of %d replicas available", dep.Status.AvailableReplicas, Replicas(app)), ObservedGeneration: app.Generation}
	if dep.Status.AvailableReplicas >= Replicas(app) {
		cond.Status, cond.Reason = metav1.ConditionTrue, "ReplicasAvailable"
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	if equalStatus(&app.Status, st) {
		return nil
	}
	app.Status = *st
	return r.Status().Update(ctx, app)
}

// equalStatus compares two statuses, conditions without their
// lastTransitionTime (SetStatusCondition keeps it when nothing changed).
func equalStatus(a, b *webappv1alpha1.WebAppStatus) bool {
	x, y := a.DeepCopy(), b.DeepCopy()
	for i := range x.Conditions {
		x.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	for i := range y.Conditions {
		y.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return equality.Semantic.DeepEqual(x, y)
}

// teardown deletes a terminating WebApp's children in order (the Service,
// so that no traffic reaches the Pods, then the Deployment, then the
// ConfigMap) and removes its finalizer.
func (r *WebAppReconciler) teardown(ctx context.Context, app *webappv1alpha1.WebApp) error {
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return nil
	}
	children := []client.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: ConfigMapName(app)}},
	}
	for _, child := range children {
		if r.Bug == StaleDelete {
			// The bug: whatever has the name goes.
			if err := r.Delete(ctx, child); client.IgnoreNotFound(err) != nil {
				return err
			}
			continue
		}
		// Who owns the child is read from the API server: the cache may
		// be behind (its copy older than the reconciler's own last write
		// to the child), and the view of app itself may be stale.
		if err := r.liveReader().Get(ctx, client.ObjectKeyFromObject(child), child); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if !metav1.IsControlledBy(child, app) {
			continue // a successor's, or someone else's: not ours to delete
		}
		err := r.Delete(ctx, child, client.Preconditions{UID: ptrTo(child.GetUID())})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	base := app.DeepCopy()
	controllerutil.RemoveFinalizer(app, Finalizer)
	return client.IgnoreNotFound(r.Patch(ctx, app, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}

// liveReader reads from the API server (APIReader), or from the cache
// when there is no APIReader.
func (r *WebAppReconciler) liveReader() client.Reader {
	if r.APIReader == nil {
		return r.Client
	}
	return r.APIReader
}

// SetupWithManager registers the reconciler: WebApps, and the
// Deployments, Services and ConfigMaps they control.
func (r *WebAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1alpha1.WebApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Named("webapp").
		Complete(r)
}

// Labels are the labels of a WebApp's Pods (its Deployment's selector and
// its Service's).
func Labels(app *webappv1alpha1.WebApp) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "webapp", "app.kubernetes.io/instance": app.Name}
}

// ConfigMapName is the name of a WebApp's ConfigMap.
func ConfigMapName(app *webappv1alpha1.WebApp) string { return app.Name + "-config" }

// Replicas is a WebApp's spec.replicas (1 when unset, the CRD's default).
func Replicas(app *webappv1alpha1.WebApp) int32 {
	if app.Spec.Replicas == nil {
		return 1
	}
	return *app.Spec.Replicas
}

// ConfigData is the data of a WebApp's ConfigMap.
func ConfigData(app *webappv1alpha1.WebApp) map[string]string {
	return map[string]string{"GREETING": app.Spec.Greeting, "LOG_LEVEL": app.Spec.LogLevel}
}

// ConfigHash is the hash of a configuration: 10 hex digits of the SHA-256
// of its keys and values in key order.
func ConfigHash(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}

func ptrTo[T any](v T) *T { return &v }
