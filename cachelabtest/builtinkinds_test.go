package cachelabtest_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/sim"
)

// appOperator is the shape of an operator installing a stateful app: for
// each ConfigMap labelled app=true it owns a ServiceAccount, a Role and a
// RoleBinding for it, a headless Service, a StatefulSet with a
// volumeClaimTemplate (replicas from data.replicas) and a PDB, all
// created or updated with controllerutil.CreateOrUpdate.
type appOperator struct{ client.Client }

func (r *appOperator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if app.Labels["app"] != "true" || app.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	om := metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}
	labels := map[string]string{"app": app.Name}
	children := []struct {
		obj    client.Object
		mutate func()
	}{}
	sa := &corev1.ServiceAccount{ObjectMeta: om}
	children = append(children, struct {
		obj    client.Object
		mutate func()
	}{sa, func() {}})
	role := &rbacv1.Role{ObjectMeta: om}
	children = append(children, struct {
		obj    client.Object
		mutate func()
	}{role, func() {
		role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}
	}})
	rb := &rbacv1.RoleBinding{ObjectMeta: om}
	children = append(children, struct {
		obj    client.Object
		mutate func()
	}{rb, func() {
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: app.Name}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: app.Name, Namespace: app.Namespace}}
	}})
	svc := &corev1.Service{ObjectMeta: om}
	children = append(children, struct {
		obj    client.Object
		mutate func()
	}{svc, func() {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.Selector = labels
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
	}})
	sts := &appsv1.StatefulSet{ObjectMeta: om}
	children = append(children, struct {
		obj    client.Object
		mutate func()
	}{sts, func() {
		sts.Spec.Replicas = ptr.To(replicasOf(&app))
		sts.Spec.ServiceName = app.Name
		sts.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		sts.Spec.Template.Labels = labels
		sts.Spec.Template.Spec.ServiceAccountName = app.Name
		if len(sts.Spec.Template.Spec.Containers) == 0 {
			sts.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: "registry.example/app:1",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}
		}
		if len(sts.Spec.VolumeClaimTemplates) == 0 {
			sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
		}
	}})
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: om}
	children = append(children, struct {
		obj    client.Object
		mutate func()
	}{pdb, func() {
		pdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	}})
	for _, c := range children {
		obj, mutate := c.obj, c.mutate
		if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
			mutate()
			return controllerutil.SetControllerReference(&app, obj, r.Scheme())
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// replicasOf is data.replicas, 1 when missing or invalid.
func replicasOf(app *corev1.ConfigMap) int32 {
	n, err := strconv.ParseInt(app.Data["replicas"], 10, 32)
	if err != nil || n < 0 {
		return 1
	}
	return int32(n)
}

// appDesired: every app ConfigMap has its six children, the StatefulSet
// with its replicas and claim template, the RoleBinding to its Role.
func appDesired(s *cachelabtest.State) error {
	for _, app := range cachelabtest.List[corev1.ConfigMap](s, "") {
		if app.Labels["app"] != "true" {
			continue
		}
		ns, name := app.Namespace, app.Name
		if _, ok := cachelabtest.Get[corev1.ServiceAccount](s, ns, name); !ok {
			return fmt.Errorf("%s/%s: no ServiceAccount", ns, name)
		}
		if _, ok := cachelabtest.Get[rbacv1.Role](s, ns, name); !ok {
			return fmt.Errorf("%s/%s: no Role", ns, name)
		}
		if rb, ok := cachelabtest.Get[rbacv1.RoleBinding](s, ns, name); !ok || rb.RoleRef.Name != name {
			return fmt.Errorf("%s/%s: no RoleBinding to its Role", ns, name)
		}
		if _, ok := cachelabtest.Get[corev1.Service](s, ns, name); !ok {
			return fmt.Errorf("%s/%s: no Service", ns, name)
		}
		sts, ok := cachelabtest.Get[appsv1.StatefulSet](s, ns, name)
		if !ok || sts.Spec.Replicas == nil || *sts.Spec.Replicas != replicasOf(app) || len(sts.Spec.VolumeClaimTemplates) != 1 {
			return fmt.Errorf("%s/%s: no StatefulSet with %d replicas and its claim template", ns, name, replicasOf(app))
		}
		if _, ok := cachelabtest.Get[policyv1.PodDisruptionBudget](s, ns, name); !ok {
			return fmt.Errorf("%s/%s: no PodDisruptionBudget", ns, name)
		}
	}
	return nil
}

func appController() cachelabtest.Controller {
	return cachelabtest.Controller{
		Setup: func(mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("app").
				Owns(&corev1.ServiceAccount{}).Owns(&rbacv1.Role{}).Owns(&rbacv1.RoleBinding{}).Owns(&corev1.Service{}).
				Owns(&appsv1.StatefulSet{}).Owns(&policyv1.PodDisruptionBudget{}).
				Complete(&appOperator{Client: mgr.GetClient()})
		},
		Desired: appDesired,
	}
}

// appPlans: an app created, scaled, its Role and PDB deleted by someone
// else, with a crash and restart of the operator in between; a second app
// created after the restart.
func appPlans() []*sim.Plan {
	app := func(name, replicas string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default","labels":{"app":"true"}},"data":{"replicas":%q}}`, name, replicas))
	}
	s := func(at int) sim.Duration { return sim.Duration(time.Duration(at) * time.Second) }
	base := func(name string, steps ...sim.Step) *sim.Plan {
		return &sim.Plan{Version: sim.PlanVersion, Name: name, Seed: 1, Objects: []json.RawMessage{app("db", "2")}, Steps: steps,
			Deadline: sim.Duration(2 * time.Minute), Quiet: sim.Duration(20 * time.Second)}
	}
	return []*sim.Plan{
		base("scale-crash-restart",
			sim.Step{At: s(1), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "db", Patch: json.RawMessage(`{"data":{"replicas":"3"}}`)},
			sim.Step{At: s(2), Actor: "controller", Op: "crash"},
			sim.Step{At: s(3), Actor: "controller", Op: "restart"},
			sim.Step{At: s(4), Actor: "user", Op: "create", Object: app("cache", "1")},
		),
		base("children-deleted",
			sim.Step{At: s(5), Actor: "user", Op: "delete", Resource: "roles.rbac.authorization.k8s.io", Namespace: "default", Name: "db"},
			sim.Step{At: s(6), Actor: "user", Op: "delete", Resource: "poddisruptionbudgets.policy", Namespace: "default", Name: "db"},
			sim.Step{At: s(7), Actor: "user", Op: "patch", Resource: "configmaps", Namespace: "default", Name: "db", Patch: json.RawMessage(`{"data":{"replicas":"0"}}`)},
		),
	}
}

// A controller-runtime operator that creates Roles, RoleBindings, a
// ServiceAccount, a StatefulSet with volumeClaimTemplates, a PDB and a
// Service (every kind served as kube-apiserver serves it, none as a
// stand-in CRD) converges under plans with a crash, a restart and its
// children deleted by someone else (issue 29's "done when", on fixed
// plans).
func TestOperatorOfBuiltinKindsConverges(t *testing.T) {
	scratch(t)
	c := appController()
	cachelabtest.Test(t, c, cachelabtest.These(appPlans()...))
}

// The same operator, with a planted bug (no PDB), fails
// eventual-convergence: the Desired check of the test above can fail.
func TestOperatorOfBuiltinKindsWithoutItsPDBFails(t *testing.T) {
	scratch(t)
	c := appController()
	c.Setup = func(mgr ctrl.Manager) error {
		return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("app").
			Complete(&noPDB{appOperator{Client: mgr.GetClient()}})
	}
	failures := cachelabtest.Catch(t, c, cachelabtest.These(appPlans()[0]))
	if len(failures) != 1 {
		t.Fatalf("an operator that never keeps its PDB: %d failed plans, want 1", len(failures))
	}
	for _, v := range failures[0].Failed {
		if v.Invariant != "eventual-convergence" || !strings.Contains(v.Reason+v.Detail, "no PodDisruptionBudget") {
			t.Errorf("failed verdict %s (%s), want only eventual-convergence for the missing PDB", v.Invariant, v.Reason)
		}
	}
}

// noPDB reconciles as appOperator, then deletes the PDB it made.
type noPDB struct{ appOperator }

func (r *noPDB) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.appOperator.Reconcile(ctx, req)
	if err != nil {
		return res, err
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
	return res, client.IgnoreNotFound(r.Delete(ctx, pdb))
}

// appExample is the app ConfigMap random plans start from and vary.
const appExample = `apiVersion: v1
kind: ConfigMap
metadata:
  name: db
  namespace: default
  labels: {app: "true"}
data:
  replicas: "2"
`

// randomAppPlans are random plans over app ConfigMaps (Primary
// "configmaps" from appExample): created, changed, deleted and recreated,
// their children (of every kind the operator makes) deleted and changed
// by another writer, in faults; checks plans, seed pinned so that the
// test is the same on every run.
func randomAppPlans(t *testing.T, checks string) cachelabtest.Plans {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(appExample), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{"rapid.checks": checks, "rapid.seed": "1"} {
		f := flag.Lookup(name)
		old := f.Value.String()
		t.Cleanup(func() { _ = f.Value.Set(old) })
		_ = f.Value.Set(value)
	}
	return cachelabtest.Random(cachelabtest.Primary("configmaps"), cachelabtest.Examples(dir))
}

// The operator of built-in kinds converges under random plans too (issue
// 29's "done when"): every Role, RoleBinding, ServiceAccount, headless
// Service, StatefulSet with volumeClaimTemplates and PDB served as
// kube-apiserver serves it (allocators, defaults, validation), none as a
// stand-in.
func TestOperatorOfBuiltinKindsConvergesUnderRandomPlans(t *testing.T) {
	scratch(t)
	cachelabtest.Test(t, appController(), randomAppPlans(t, "10"))
}

// Under the same random plans the operator that deletes its own PDB is
// caught: the random plans can fail it.
func TestOperatorOfBuiltinKindsWithoutItsPDBFailsUnderRandomPlans(t *testing.T) {
	scratch(t)
	c := appController()
	c.Setup = func(mgr ctrl.Manager) error {
		return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("app").
			Complete(&noPDB{appOperator{Client: mgr.GetClient()}})
	}
	if f := cachelabtest.Catch(t, c, randomAppPlans(t, "10")); len(f) == 0 {
		t.Fatal("10 random plans did not catch an operator that deletes its PDB")
	}
}
