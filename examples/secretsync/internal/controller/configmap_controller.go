// Package controller holds the secretsync reconciler, in kubebuilder's
// layout (internal/controller/<kind>_controller.go).
package controller

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// ConfigMapReconciler keeps, for every ConfigMap, a Secret of the same
// name holding its data, owned by it.
type ConfigMapReconciler struct {
	// Client reads ConfigMaps from the manager's cache and writes.
	client.Client
	// APIReader reads Secrets from the API server, not the cache: the
	// cache may not show the reconciler's own last write yet, and acting
	// on it would create the Secret again (409 AlreadyExists) or update
	// from a copy older than its own write (409 Conflict).
	APIReader client.Reader
	Scheme    *runtime.Scheme

	// CreateOnly is a planted bug: an existing Secret is never updated,
	// so a ConfigMap's later changes never reach it.
	CreateOnly bool
}

// Reconcile makes the Secret of the ConfigMap req names match it.
func (r *ConfigMapReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // the garbage collector deletes its Secret
	}
	if !cm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	want := WantedData(&cm)
	var secret corev1.Secret
	err := r.APIReader.Get(ctx, req.NamespacedName, &secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}, Data: want}
		if err := controllerutil.SetControllerReference(&cm, &secret, r.Scheme); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, &secret); err != nil {
			return ctrl.Result{}, err
		}
		// Come back until the cache has seen the new Secret: a Secret
		// deleted before the cache ever saw it (its watch held, then
		// ended with 410) gives no event after the relist, so nothing
		// else would bring this ConfigMap back (found by the lab: a
		// random plan held the Secrets watch, deleted the new Secret and
		// expired the watch).
		return ctrl.Result{RequeueAfter: time.Second}, nil
	case err != nil:
		return ctrl.Result{}, err
	case r.CreateOnly:
		return ctrl.Result{}, nil
	}
	if metav1.IsControlledBy(&secret, &cm) && equalData(secret.Data, want) {
		var cached corev1.Secret
		if err := r.Get(ctx, req.NamespacedName, &cached); apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil // not seen by the cache yet: see above
		}
		return ctrl.Result{}, nil
	}
	secret.Data = want
	secret.OwnerReferences = nil
	if err := controllerutil.SetControllerReference(&cm, &secret, r.Scheme); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.Update(ctx, &secret)
}

// SetupWithManager registers the reconciler: ConfigMaps, and the Secrets
// they own.
func (r *ConfigMapReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Named("secretsync").
		Complete(r)
}

// WantedData is the Secret data of cm.
func WantedData(cm *corev1.ConfigMap) map[string][]byte {
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	maps.Copy(data, cm.BinaryData)
	return data
}

func equalData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
}

// Desired reports whether every ConfigMap's Secret holds its data and is
// owned by it: nil if so, else what is wrong. For tests.
func Desired(cms []*corev1.ConfigMap, secret func(ns, name string) (*corev1.Secret, bool)) error {
	for _, cm := range cms {
		if !cm.DeletionTimestamp.IsZero() {
			continue
		}
		s, ok := secret(cm.Namespace, cm.Name)
		switch {
		case !ok:
			return fmt.Errorf("configmap %s/%s has no secret", cm.Namespace, cm.Name)
		case !metav1.IsControlledBy(s, cm):
			return fmt.Errorf("secret %s/%s is not controlled by configmap uid %s", s.Namespace, s.Name, cm.UID)
		case !equalData(s.Data, WantedData(cm)):
			return fmt.Errorf("secret %s/%s does not hold its configmap's data", s.Namespace, s.Name)
		}
	}
	return nil
}
