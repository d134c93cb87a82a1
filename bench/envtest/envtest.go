// Package envtest measures the lab side by side with what a controller
// author uses today, envtest: a real kube-apiserver and etcd (the ones
// `make real-apiserver` builds), started once.
//
// For each plan, the same user actions are played three ways, alternating:
//
//   - envtest: the plan's subject (a real controller) started over a
//     kubeconfig against the real server, the plan's initial objects
//     created, its user steps played back to back in their order (as a
//     test does, not at their virtual times: the wall is a lower bound,
//     a paced replay would take at least the plan's span), then waited
//     for as an envtest test waits (gomega's Eventually, every 10 ms):
//     until the subject says the server's state is the one it wants
//     (sim.Converger) and its caches hold every object at the server's
//     resourceVersion (sim.CacheSnapshotter). No fault can be injected.
//     CPU is this process's (harness, clients and controller) plus
//     kube-apiserver's and etcd's (from /proc), kube-controller-manager
//     left out (envtest has none).
//   - lab: the plan's reference run (internal/lab.ReferencePlan: the same
//     user actions, no fault) through sim.Run in a synctest bubble.
//   - lab+faults: the plan as it is.
//
// The lab's CPU and wall are the whole process's around sim.Run. Each
// plan lives in a namespace of its own on the real server, deleted after.
package envtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/sim"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// Server is a running real kube-apiserver and etcd, as
// fidelity/realserver/start.sh leaves them.
type Server struct {
	// Config reaches the API server as its admin.
	Config *rest.Config
	// PIDs are the processes whose CPU counts as the server's
	// (kube-apiserver and etcd).
	PIDs []int

	kube   kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// FromEnvFile reads the env file start.sh writes (/tmp/realserver.env by
// default: KUBECONFIG, STATE_DIR) and connects to the server it names.
func FromEnvFile(path string) (*Server, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("envtest: %w (start the real server with `make real-apiserver-start`)", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			env[strings.TrimPrefix(k, "export ")] = strings.Trim(v, `"'`)
		}
	}
	if env["KUBECONFIG"] == "" || env["STATE_DIR"] == "" {
		return nil, fmt.Errorf("envtest: %s names no KUBECONFIG or STATE_DIR", path)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env["KUBECONFIG"])
	if err != nil {
		return nil, fmt.Errorf("envtest: kubeconfig %s: %w", env["KUBECONFIG"], err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling: as fast as the server answers
	s := &Server{Config: cfg}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		b, err := os.ReadFile(filepath.Join(env["STATE_DIR"], "pids", name+".pid"))
		if err != nil {
			return nil, fmt.Errorf("envtest: pid of %s: %w", name, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("envtest: pid of %s: %w", name, err)
		}
		s.PIDs = append(s.PIDs, pid)
	}
	if s.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if s.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	s.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return s, nil
}

// ServerCPU is the CPU time the server's processes have used so far.
func (s *Server) ServerCPU() (time.Duration, error) {
	var total time.Duration
	for _, pid := range s.PIDs {
		d, err := processCPU(pid)
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// processCPU reads utime+stime of pid from /proc (clock ticks of 10 ms).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("envtest: CPU of process %d: %w", pid, err)
	}
	// The command may hold spaces: the fields start after its ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("envtest: /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("envtest: /proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// Measurement is one play of a plan.
type Measurement struct {
	// Wall and CPU: see the package comment for what each side counts.
	Wall, CPU time.Duration
	// ServerCPU is the part of CPU the real server's processes used
	// (envtest only); IdleServerCPU, what they used in an idle window
	// after the play, scaled to its wall (their own background work and
	// other clients', which ServerCPU includes too).
	ServerCPU, IdleServerCPU time.Duration
	// Steps is the number of user steps played; Failed, how many the
	// server refused (a patch of an object the plan deleted: the same
	// answer the lab gives); Skipped, the steps a replay cannot play
	// (not an API operation of the user).
	Steps, Failed, Skipped int
}

// Replay plays p's initial objects and user steps against the real server
// with p's subject running over the server's kubeconfig, in namespace ns
// (created, deleted after), and waits for the subject to converge, at
// most timeout. Only subjects whose informers watch core/v1 resources
// (the "resource" parameter, default configmaps) are supported.
func (s *Server) Replay(ctx context.Context, p *sim.Plan, ns string, timeout time.Duration) (Measurement, error) {
	var m Measurement
	info, ok := sim.LookupSubject(p.Subject)
	if !ok {
		return m, fmt.Errorf("envtest: unknown subject %q", p.Subject)
	}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return m, fmt.Errorf("envtest: namespace %s: %w", ns, err)
	}
	defer func() {
		_ = s.kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{})
	}()
	cpu0, wall0 := fakeapibench.ProcessCPU(), fakeapibench.WallClock()
	srv0, err := s.ServerCPU()
	if err != nil {
		return m, err
	}
	subjCtx, stop := context.WithCancel(ctx)
	defer stop()
	subj := info.New()
	start := time.Now()
	env := sim.Env{
		Name: info.Name, Kube: s.kube, Dynamic: s.dyn, RESTConfig: s.Config,
		ListerWatcher: func(gvr schema.GroupVersionResource, _ string) cache.ListerWatcherWithContext {
			return cache.NewListWatchFromClient(s.kube.CoreV1().RESTClient(), gvr.Resource, ns, fields.Everything())
		},
		Rec:    nopRecorder{start},
		Params: p.SubjectParams,
	}
	var watched []schema.GroupVersionResource
	for _, raw := range p.Objects {
		gvr, err := s.create(ctx, raw, ns)
		if err != nil {
			return m, fmt.Errorf("envtest: initial object: %w", err)
		}
		watched = addGVR(watched, gvr)
	}
	if err := subj.Start(subjCtx, env); err != nil {
		return m, fmt.Errorf("envtest: start %s: %w", info.Name, err)
	}
	for _, st := range p.Steps {
		if st.Actor != "user" {
			continue
		}
		if st.Child != (sim.ChildRef{}) || (st.Op != "create" && st.Op != "update" && st.Op != "patch" && st.Op != "delete") {
			m.Skipped++
			continue
		}
		m.Steps++
		gvr, err := s.step(ctx, st, ns)
		if gvr != (schema.GroupVersionResource{}) {
			watched = addGVR(watched, gvr)
		}
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) {
				return m, fmt.Errorf("envtest: step: %w", err)
			}
			m.Failed++
		}
	}
	cached := corev1.SchemeGroupVersion.WithResource("configmaps")
	if res := p.SubjectParams["resource"]; res != "" {
		cached = corev1.SchemeGroupVersion.WithResource(res)
	}
	watched = addGVR(watched, cached)
	deadline := time.Now().Add(timeout)
	for {
		ok, why, err := s.converged(ctx, subj, watched, sim.ResourceName(cached), ns)
		if err != nil {
			return m, err
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("envtest: %s did not converge within %s: %s", info.Name, timeout, why)
		}
		time.Sleep(10 * time.Millisecond) // real server, real time: Eventually's default poll
	}
	m.Wall, m.CPU = fakeapibench.WallClock()-wall0, fakeapibench.ProcessCPU()-cpu0
	srv1, err := s.ServerCPU()
	if err != nil {
		return m, err
	}
	m.ServerCPU = srv1 - srv0
	m.CPU += m.ServerCPU
	return m, nil
}

// converged reports whether the subject wants the server's state as it is
// (objects of gvrs in ns) and every cache it shows holds each object of
// resource cached (as sim.ResourceName names it) at the server's version,
// and no other.
func (s *Server) converged(ctx context.Context, subj sim.Subject, gvrs []schema.GroupVersionResource, cached, ns string) (bool, string, error) {
	var objs []sim.ServerObject
	want := map[string]int64{}
	for _, gvr := range gvrs {
		list, err := s.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", fmt.Errorf("envtest: list %s: %w", gvr.Resource, err)
		}
		for i := range list.Items {
			b, err := json.Marshal(list.Items[i].Object)
			if err != nil {
				return false, "", err
			}
			objs = append(objs, sim.ServerObject{Resource: gvr, Object: b})
			rv, _ := strconv.ParseInt(list.Items[i].GetResourceVersion(), 10, 64)
			want[sim.ResourceName(gvr)+" "+list.Items[i].GetNamespace()+"/"+list.Items[i].GetName()] = rv
		}
	}
	if c, ok := subj.(sim.Converger); ok {
		if ok, why := c.Desired(objs); !ok {
			return false, why, nil
		}
	}
	if cs, ok := subj.(sim.CacheSnapshotter); ok {
		for _, snap := range cs.SnapshotCaches() {
			got := map[string]int64{}
			for _, o := range snap.Objects {
				got[o.Resource+" "+o.Namespace+"/"+o.Name] = o.RV
			}
			for k, rv := range want {
				if !strings.HasPrefix(k, cached+" ") {
					continue
				}
				if got[k] != rv {
					return false, fmt.Sprintf("cache %s: %s at %d, server at %d", snap.Name, k, got[k], rv), nil
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					return false, fmt.Sprintf("cache %s: %s, gone from the server", snap.Name, k), nil
				}
			}
		}
	}
	return true, "", nil
}

// create creates one object of the plan in ns.
func (s *Server) create(ctx context.Context, raw []byte, ns string) (schema.GroupVersionResource, error) {
	u, gvr, err := s.object(raw, ns)
	if err != nil {
		return gvr, err
	}
	_, err = s.dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
	return gvr, err
}

// object decodes a plan's object and finds its resource.
func (s *Server) object(raw []byte, ns string) (*unstructured.Unstructured, schema.GroupVersionResource, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, schema.GroupVersionResource{}, err
	}
	gvk := u.GroupVersionKind()
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, schema.GroupVersionResource{}, err
	}
	u.SetNamespace(ns)
	return u, mapping.Resource, nil
}

// step plays one user step in ns, as sim's apiStep does.
func (s *Server) step(ctx context.Context, st sim.Step, ns string) (schema.GroupVersionResource, error) {
	if st.Op == "create" {
		return s.create(ctx, st.Object, ns)
	}
	var (
		gvr  schema.GroupVersionResource
		u    *unstructured.Unstructured
		name = st.Name
		err  error
	)
	if st.Resource != "" {
		if gvr, err = s.mapper.ResourceFor(schema.GroupVersionResource{Resource: st.Resource}); err != nil {
			return gvr, err
		}
	}
	if len(st.Object) > 0 {
		var ogvr schema.GroupVersionResource
		if u, ogvr, err = s.object(st.Object, ns); err != nil {
			return gvr, err
		}
		if gvr == (schema.GroupVersionResource{}) {
			gvr = ogvr
		}
		if name == "" {
			name = u.GetName()
		}
	}
	rc := s.dyn.Resource(gvr).Namespace(ns)
	switch st.Op {
	case "update":
		if u == nil {
			return gvr, fmt.Errorf("update step without an object")
		}
		if u.GetResourceVersion() == "" {
			cur, err := rc.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return gvr, err
			}
			u.SetResourceVersion(cur.GetResourceVersion())
		}
		_, err = rc.Update(ctx, u, metav1.UpdateOptions{})
	case "patch":
		pt := types.MergePatchType
		switch st.PatchType {
		case "json":
			pt = types.JSONPatchType
		case "strategic":
			pt = types.StrategicMergePatchType
		}
		_, err = rc.Patch(ctx, name, pt, st.Patch, metav1.PatchOptions{})
	case "delete":
		err = rc.Delete(ctx, name, metav1.DeleteOptions{})
	}
	return gvr, err
}

func addGVR(gvrs []schema.GroupVersionResource, gvr schema.GroupVersionResource) []schema.GroupVersionResource {
	for _, g := range gvrs {
		if g == gvr {
			return gvrs
		}
	}
	gvrs = append(gvrs, gvr)
	sort.Slice(gvrs, func(i, j int) bool { return gvrs[i].String() < gvrs[j].String() })
	return gvrs
}

// nopRecorder drops the subject's records (there is no trace on a real
// server) and tells the time since the replay started.
type nopRecorder struct{ start time.Time }

// Record drops r.
func (nopRecorder) Record(sim.Record) {}

// Now is the time since the replay started.
func (r nopRecorder) Now() time.Duration { return time.Since(r.start) }

var _ sim.Recorder = nopRecorder{}
