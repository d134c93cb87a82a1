package store

import (
	appsv1 "k8s.io/api/apps/v1"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestPatchTypesApplyAsTheAPIServerDoes(t *testing.T) {
	s, _ := newTestStore(t, 0)
	// Strategic merge patch merges containers by name (a DaemonSet's
	// template: a Pod's container list is immutable).
	dsGVR := appsv1.SchemeGroupVersion.WithResource("daemonsets")
	mustCreate(t, s, dsGVR, "ns", &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, Template: dsTemplate()}})
	out, _, err := s.Patch(dsGVR, "ns", "d", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"envoy"}]}}}}`), metav1.PatchOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, c := range out.(*appsv1.DaemonSet).Spec.Template.Spec.Containers {
		images = append(images, c.Name+"="+c.Image)
	}
	if diff := cmp.Diff([]string{"side=envoy", "c=i"}, images); diff != "" {
		t.Errorf("strategic merge of containers (-want +got):\n%s", diff)
	}
	// A JSON merge patch replaces the list.
	out, _, err = s.Patch(dsGVR, "ns", "d", types.MergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"x"}]}}}}`), metav1.PatchOptions{}, "")
	if err != nil || len(out.(*appsv1.DaemonSet).Spec.Template.Spec.Containers) != 1 {
		t.Errorf("merge patch: %v, containers %v; want the list replaced", err, out)
	}
	// A Pod's containers are not a list a patch may change (case
	// pod-update-spec): 422 Forbidden on spec; an image may change.
	mustCreate(t, s, podsGVR, "ns", pod("", "p"))
	_, _, err = s.Patch(podsGVR, "ns", "p", types.StrategicMergePatchType,
		[]byte(`{"spec":{"containers":[{"name":"side","image":"envoy"}]}}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	out, _, err = s.Patch(podsGVR, "ns", "p", types.StrategicMergePatchType,
		[]byte(`{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}`), metav1.PatchOptions{}, "")
	if err != nil || out.(*corev1.Pod).Spec.Containers[0].Image != "busybox:2" || out.(*corev1.Pod).Generation != 2 {
		t.Errorf("image patch: %v, %v; want image busybox:2 at generation 2", err, out)
	}
	// A JSON patch.
	out, _, err = s.Patch(podsGVR, "ns", "p", types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`), metav1.PatchOptions{}, "")
	if err != nil || out.(*corev1.Pod).Labels["a"] != "b" {
		t.Errorf("json patch: %v, labels %v", err, out.(*corev1.Pod).Labels)
	}
	// Patching pods/status: spec is kept, metadata passes (the pod status
	// strategy resets only spec and ownerReferences).
	out, _, err = s.Patch(podsGVR, "ns", "p", types.MergePatchType,
		[]byte(`{"status":{"phase":"Running"},"spec":{"activeDeadlineSeconds":5},"metadata":{"labels":{"a":"c"}}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if gp := out.(*corev1.Pod); gp.Status.Phase != corev1.PodRunning || gp.Spec.ActiveDeadlineSeconds != nil || gp.Labels["a"] != "c" {
		t.Errorf("status patch: phase %q deadline %v labels %v; want Running, no deadline, a=c", gp.Status.Phase, gp.Spec.ActiveDeadlineSeconds, gp.Labels)
	}
	// A patch carrying a stale resourceVersion conflicts.
	_, _, err = s.Patch(podsGVR, "ns", "p", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"2","labels":{"x":"y"}}}`), metav1.PatchOptions{}, "")
	assertStatus(t, err, 409, metav1.StatusReasonConflict)
	// Custom resources: merge patch keeps integers integers.
	mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1))
	wout, _, err := s.Patch(widgetsGVR, "ns", "w", types.MergePatchType, []byte(`{"spec":{"size":5}}`), metav1.PatchOptions{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if size, found, err := unstructured.NestedInt64(wout.(*unstructured.Unstructured).Object, "spec", "size"); !found || err != nil || size != 5 {
		t.Errorf("widget size after patch = %d (%v, %v), want int64 5", size, found, err)
	}
	if g := wout.(*unstructured.Unstructured).GetGeneration(); g != 2 {
		t.Errorf("widget generation after a spec patch = %d, want 2", g)
	}
}

func TestMalformedPatchesGetTypedErrorsAndWriteNothing(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1))
	cases := []struct {
		name    string
		gvr     schema.GroupVersionResource
		objName string
		pt      types.PatchType
		body    string
		code    int32
		reason  metav1.StatusReason
		msg     string
	}{
		{"merge patch not JSON", configmapsGVR, "a", types.MergePatchType, `{"data":`, 400, metav1.StatusReasonBadRequest, ""},
		{"json patch not a list", configmapsGVR, "a", types.JSONPatchType, `{"op":"add"}`, 400, metav1.StatusReasonBadRequest, ""},
		{"json patch test fails", configmapsGVR, "a", types.JSONPatchType, `[{"op":"test","path":"/data/k","value":"nope"}]`, 422, metav1.StatusReasonInvalid, "testing value /data/k failed"},
		{"json patch bad path", configmapsGVR, "a", types.JSONPatchType, `[{"op":"replace","path":"/nope/x","value":1}]`, 422, metav1.StatusReasonInvalid, ""},
		{"strategic patch not JSON", configmapsGVR, "a", types.StrategicMergePatchType, `[`, 400, metav1.StatusReasonBadRequest, ""},
		{"strategic patch on a custom resource", widgetsGVR, "w", types.StrategicMergePatchType, `{}`, 415, metav1.StatusReasonUnsupportedMediaType, "application/json-patch+json, application/merge-patch+json"},
		{"apply patch without fieldManager", configmapsGVR, "a", types.ApplyPatchType, `{}`, 422, metav1.StatusReasonInvalid, "fieldManager: Required value"},
		{"apply CBOR patch", configmapsGVR, "a", types.ApplyCBORPatchType, `{}`, 415, metav1.StatusReasonUnsupportedMediaType, "accepted media types include"},
		{"result of the wrong shape", configmapsGVR, "a", types.MergePatchType, `{"data":"flat"}`, 422, metav1.StatusReasonInvalid, ""},
		{"metadata not an object", widgetsGVR, "w", types.MergePatchType, `{"metadata":"oops"}`, 422, metav1.StatusReasonInvalid, "metadata must be an object"},
		{"rename through a patch", configmapsGVR, "a", types.MergePatchType, `{"metadata":{"name":"b"}}`, 400, metav1.StatusReasonBadRequest, "does not match the name on the URL"},
		{"invalid result", widgetsGVR, "w", types.MergePatchType, `{"spec":{"size":-3}}`, 422, metav1.StatusReasonInvalid, "spec.size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := s.RV()
			_, evs, err := s.Patch(c.gvr, "ns", c.objName, c.pt, []byte(c.body), metav1.PatchOptions{}, "")
			assertStatus(t, err, c.code, c.reason)
			if err != nil && !strings.Contains(fullMessage(err), c.msg) {
				t.Errorf("message = %q, want it to contain %q", fullMessage(err), c.msg)
			}
			if s.RV() != before || len(evs) != 0 {
				t.Errorf("failed patch wrote: RV %d -> %d, %d events", before, s.RV(), len(evs))
			}
		})
	}
}

func TestDeleteCollectionDeletesMatchingObjectsOneRevisionEach(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", map[string]string{"app": "x"}))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "b", map[string]string{"app": "y"}))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "c", map[string]string{"app": "x"}))
	mustCreate(t, s, configmapsGVR, "other", cm("", "d", map[string]string{"app": "x"}))
	evs, err := s.DeleteCollection(configmapsGVR, "ns", metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []eventSummary{{watch.Deleted, "a", 6, false}, {watch.Deleted, "c", 7, false}}
	if diff := cmp.Diff(want, summarize(t, evs)); diff != "" {
		t.Errorf("deletecollection events (-want +got):\n%s", diff)
	}
	list, _, _ := s.List(configmapsGVR, "", metav1.ListOptions{}, 0)
	if diff := cmp.Diff([]string{"b", "d"}, names(t, list)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

func TestCompactionIsExplicitAndBounded(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	assertStatus(t, s.Compact(3), 400, metav1.StatusReasonBadRequest)
	if err := s.Compact(2); err != nil || s.CompactedRV() != 2 || len(s.History()) != 0 {
		t.Errorf("Compact(2): %v, compacted %d, history %d; want nil, 2, 0", err, s.CompactedRV(), len(s.History()))
	}
	if err := s.Compact(1); err != nil || s.CompactedRV() != 2 {
		t.Errorf("Compact below the compacted revision: %v, compacted %d; want a no-op", err, s.CompactedRV())
	}
	// The state at the compacted revision stays readable.
	list, _, err := s.List(configmapsGVR, "ns", metav1.ListOptions{ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 0)
	if err != nil || len(names(t, list)) != 1 {
		t.Errorf("exact list at the compacted revision: %v", err)
	}
}

func TestObjectsSnapshotsEveryResource(t *testing.T) {
	s, _ := newTestStore(t, 0)
	mustCreate(t, s, podsGVR, "ns", pod("", "p"))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "b", nil))
	mustCreate(t, s, configmapsGVR, "ns", cm("", "a", nil))
	mustCreate(t, s, widgetsGVR, "ns", widget("ns", "w", 1))
	var got []string
	for _, ev := range s.Objects() {
		got = append(got, ev.GVR.Resource+"/"+metaOf(t, ev.Object).GetName()+"@"+metaOf(t, ev.Object).GetResourceVersion())
		if ev.Type != watch.Added || ev.RV != rvOf(t, ev.Object) {
			t.Errorf("snapshot event %v at %d for an object at %d", ev.Type, ev.RV, rvOf(t, ev.Object))
		}
	}
	want := []string{"configmaps/a@4", "configmaps/b@3", "pods/p@2", "widgets/w@5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Objects (-want +got):\n%s", diff)
	}
}

func TestResourcesComeFromTheSchemeAndCRDsRegister(t *testing.T) {
	s, _ := newTestStore(t, 0)
	var got []string
	for _, r := range s.Resources() {
		got = append(got, r.GVR.String()+" "+r.Kind+" "+r.ListKind)
	}
	want := []string{
		"/v1, Resource=configmaps ConfigMap ConfigMapList",
		"/v1, Resource=endpoints Endpoints EndpointsList",
		"/v1, Resource=events Event EventList",
		"/v1, Resource=limitranges LimitRange LimitRangeList",
		"/v1, Resource=namespaces Namespace NamespaceList",
		"/v1, Resource=nodes Node NodeList",
		"/v1, Resource=persistentvolumeclaims PersistentVolumeClaim PersistentVolumeClaimList",
		"/v1, Resource=pods Pod PodList",
		"/v1, Resource=replicationcontrollers ReplicationController ReplicationControllerList",
		"/v1, Resource=secrets Secret SecretList",
		"/v1, Resource=serviceaccounts ServiceAccount ServiceAccountList",
		"/v1, Resource=services Service ServiceList",
		"apiextensions.k8s.io/v1, Resource=customresourcedefinitions CustomResourceDefinition CustomResourceDefinitionList",
		"apps/v1, Resource=controllerrevisions ControllerRevision ControllerRevisionList",
		"apps/v1, Resource=daemonsets DaemonSet DaemonSetList",
		"apps/v1, Resource=deployments Deployment DeploymentList",
		"apps/v1, Resource=replicasets ReplicaSet ReplicaSetList",
		"apps/v1, Resource=statefulsets StatefulSet StatefulSetList",
		"autoscaling/v2, Resource=horizontalpodautoscalers HorizontalPodAutoscaler HorizontalPodAutoscalerList",
		"autoscaling/v1, Resource=horizontalpodautoscalers HorizontalPodAutoscaler HorizontalPodAutoscalerList",
		"batch/v1, Resource=cronjobs CronJob CronJobList",
		"batch/v1, Resource=jobs Job JobList",
		"coordination.k8s.io/v1, Resource=leases Lease LeaseList",
		"discovery.k8s.io/v1, Resource=endpointslices EndpointSlice EndpointSliceList",
		"events.k8s.io/v1, Resource=events Event EventList",
		"lab.example.com/v1, Resource=widgets Widget WidgetList",
		"networking.k8s.io/v1, Resource=ingresses Ingress IngressList",
		"networking.k8s.io/v1, Resource=networkpolicies NetworkPolicy NetworkPolicyList",
		"node.k8s.io/v1, Resource=runtimeclasses RuntimeClass RuntimeClassList",
		"policy/v1, Resource=poddisruptionbudgets PodDisruptionBudget PodDisruptionBudgetList",
		"rbac.authorization.k8s.io/v1, Resource=clusterrolebindings ClusterRoleBinding ClusterRoleBindingList",
		"rbac.authorization.k8s.io/v1, Resource=clusterroles ClusterRole ClusterRoleList",
		"rbac.authorization.k8s.io/v1, Resource=rolebindings RoleBinding RoleBindingList",
		"rbac.authorization.k8s.io/v1, Resource=roles Role RoleList",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Resources (-want +got):\n%s", diff)
	}
	if ns, _ := s.Resource(namespacesGVR); ns.Namespaced || !ns.HasStatus {
		t.Errorf("namespaces = %+v, want cluster-scoped with status", ns)
	}
	if err := s.Register(Resource{GVR: widgetsGVR, Kind: "Widget"}); err == nil || !strings.Contains(err.Error(), "already served") {
		t.Errorf("registering widgets twice: %v", err)
	}
	if err := s.Register(Resource{GVR: schema.GroupVersionResource{Group: "x", Resource: "ys"}, Kind: "Y"}); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("registering without a version: %v", err)
	}
	// Both event APIs are served with their own validation.
	_, _, err := s.Create(schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}, "ns",
		&eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	// A core Event about an object of another namespace is refused (case
	// event-validation); about one of its own, it is stored.
	_, _, err = s.Create(eventsGVR, "ns", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Reason: "Started"}, metav1.CreateOptions{})
	assertStatus(t, err, 422, metav1.StatusReasonInvalid)
	mustCreate(t, s, eventsGVR, "ns", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Reason: "Started", InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"}})
	list, _, err := s.List(eventsGVR, "ns", metav1.ListOptions{FieldSelector: "reason=Started"}, 0)
	if err != nil || len(names(t, list)) != 1 {
		t.Errorf("core events by reason: %v", err)
	}
	// A cluster-scoped namespace ignores the request namespace.
	nsObj := mustCreate(t, s, namespacesGVR, "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}).(*corev1.Namespace)
	if nsObj.Namespace != "" || nsObj.Status.Phase != corev1.NamespaceActive {
		t.Errorf("namespace = %+v, want no namespace and phase Active", nsObj)
	}
	// Typed built-ins also accept unstructured input (dynamic clients).
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "u"}, "data": map[string]any{"k": "v"}}}
	got2 := mustCreate(t, s, configmapsGVR, "ns", u)
	if c, ok := got2.(*corev1.ConfigMap); !ok || c.Data["k"] != "v" {
		t.Errorf("unstructured ConfigMap stored as %T %v, want a typed ConfigMap", got2, got2)
	}
}

// fullMessage is an API error's message and its causes' (kube-apiserver
// puts a failed JSON patch's reason in a cause).
func fullMessage(err error) string {
	msg := err.Error()
	if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
		for _, c := range st.Status().Details.Causes {
			msg += "; " + c.Message
		}
	}
	return msg
}
