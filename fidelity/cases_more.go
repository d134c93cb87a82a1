package fidelity

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// More built-ins controllers watch: CronJobs, Endpoints, EndpointSlices.
var (
	CronJobs       = Resource{GVR: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, Namespaced: true}
	Endpoints      = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}, Namespaced: true}
	EndpointSlices = Resource{GVR: schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, Namespaced: true}
)

// cronJob is a CronJob named name running every minute.
func cronJob(name string) *batchv1.CronJob {
	t := template(name)
	t.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	return &batchv1.CronJob{TypeMeta: metav1.TypeMeta{Kind: "CronJob", APIVersion: "batch/v1"}, ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: t}}}}
}

var moreCases = []Case{
	{Name: "cronjob-create-defaults", Doc: "A CronJob gets concurrencyPolicy Allow, suspend false, history limits 3 and 1, its template's Pod defaults, generation 1; suspending it bumps generation; /status changes only status.", Run: func(e *Env) {
		e.Create("create tick", CronJobs, cronJob("tick"))
		e.Patch("suspend", CronJobs, "tick", "", types.MergePatchType, `{"spec":{"suspend":true}}`)
		e.Patch("patch status", CronJobs, "tick", "status", types.MergePatchType, `{"spec":{"suspend":false},"status":{"lastScheduleTime":"2026-01-02T03:04:00Z"}}`)
		bad := cronJob("bad")
		bad.Spec.Schedule = ""
		e.Create("create without a schedule", CronJobs, bad)
	}},
	{Name: "endpoints-create-and-update", Doc: "Endpoints are stored as sent (no generation); an update of missing Endpoints creates them; a subset address must be an IP.", Run: func(e *Env) {
		ep := &corev1.Endpoints{TypeMeta: metav1.TypeMeta{Kind: "Endpoints", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "db"},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.7"}}, Ports: []corev1.EndpointPort{{Name: "sql", Port: 5432}}}}}
		e.Create("create db", Endpoints, ep)
		ep2 := ep.DeepCopy()
		ep2.Name = "cache"
		e.Update("update missing cache", Endpoints, "cache", ep2)
		bad := ep.DeepCopy()
		bad.Name = "bad"
		bad.Subsets[0].Addresses[0].IP = "not-an-ip"
		e.Create("create with a bad address", Endpoints, bad)
	}},
	{Name: "endpointslice-create", Doc: "An EndpointSlice is stored with its addressType, endpoints and ports (protocol defaulted to TCP, generation 1); a bad addressType is refused.", Run: func(e *Env) {
		port, name := int32(5432), "sql"
		es := &discoveryv1.EndpointSlice{TypeMeta: metav1.TypeMeta{Kind: "EndpointSlice", APIVersion: "discovery.k8s.io/v1"},
			ObjectMeta:  metav1.ObjectMeta{Name: "db-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "db"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.7"}}},
			Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port}}}
		e.Create("create db-abc", EndpointSlices, es)
		e.List("list by service", EndpointSlices, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=db"})
		bad := es.DeepCopy()
		bad.Name = "bad"
		bad.AddressType = "IPv5"
		e.Create("create with a bad addressType", EndpointSlices, bad)
	}},
}

func init() { Cases = append(Cases, moreCases...) }
