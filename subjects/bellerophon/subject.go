package bellerophon

import (
	"context"
	"encoding/json"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/subjects/bellerophon/apis/lab/v1alpha1"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

// Options configure a Controller. The zero value is the correct controller
// with the defaults below.
type Options struct {
	// Bug is the mutant's single bug. Optional; default NoBug.
	Bug Bug
	// Workers is the number of workers. Optional; default 2.
	Workers int
	// HandlerDelay is slept in every handler call (a slow handler).
	// Optional; default 0.
	HandlerDelay time.Duration
	// LoopTime is the duration of one trip round the main loop as the
	// origin notes count it; quiescence is 10x LoopTime without an event.
	// Optional; default 100ms.
	LoopTime time.Duration
	// Backups is the external backup store. Optional; default the store of
	// the run (BackupStoreFor(env.Rec)).
	Backups *BackupStore
}

// The subject parameters (Plan.SubjectParams) the controller reads.
const (
	// ParamWorkers is the number of workers (an integer >= 1).
	ParamWorkers = "workers"
	// ParamHandlerDelay is Options.HandlerDelay (a Go duration).
	ParamHandlerDelay = "handlerDelay"
	// ParamLoopTime is Options.LoopTime (a Go duration).
	ParamLoopTime = "loopTime"
)

func (o Options) withDefaults() (Options, error) {
	if !o.Bug.Valid() {
		return o, fmt.Errorf("bellerophon: unknown bug %q (known: %s)", o.Bug, knownBugs())
	}
	if o.Workers == 0 {
		o.Workers = 2
	}
	if o.Workers < 0 {
		return o, fmt.Errorf("bellerophon: workers = %d, want at least 1", o.Workers)
	}
	if o.LoopTime == 0 {
		o.LoopTime = 100 * time.Millisecond
	}
	if o.LoopTime < 0 || o.HandlerDelay < 0 {
		return o, fmt.Errorf("bellerophon: loopTime %v and handlerDelay %v must not be negative", o.LoopTime, o.HandlerDelay)
	}
	return o, nil
}

func knownBugs() string {
	names := make([]string, 0, len(Bugs))
	for _, b := range Bugs {
		names = append(names, string(b.Bug))
	}
	return strings.Join(names, ", ")
}

// WithParams returns o with the parameters of params applied (see the
// Param* constants). Other keys are left to others (the sim's actors read
// theirs from the same map). A malformed value is an error naming the key
// and the expected form.
func (o Options) WithParams(params map[string]string) (Options, error) {
	if v, ok := params[ParamWorkers]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, fmt.Errorf("bellerophon: subject parameter %s=%q: want an integer >= 1", ParamWorkers, v)
		}
		o.Workers = n
	}
	for key, dst := range map[string]*time.Duration{ParamHandlerDelay: &o.HandlerDelay, ParamLoopTime: &o.LoopTime} {
		v, ok := params[key]
		if !ok {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return o, fmt.Errorf("bellerophon: subject parameter %s=%q: want a non-negative Go duration such as \"100ms\"", key, v)
		}
		*dst = d
	}
	return o, nil
}

// Subject runs a Bellerophon Controller under the sim. It implements
// sim.Subject, sim.Converger and sim.CacheSnapshotter.
type Subject struct {
	opts Options

	mu sync.Mutex
	// c is the controller of the current process start.
	c *Controller

	// decoded is what Desired decoded at its last call: the recorder asks
	// after every write, and all objects but the one written are the same
	// bytes as the last time.
	decoded decodeCache
}

// decodeCache keeps, by resource and JSON, the objects one call decoded,
// for the next: at most the objects of the last call (maps per call).
type decodeCache struct {
	mu   sync.Mutex
	last map[schema.GroupVersionResource]map[string]any
}

// decoder returns a decode function for one call that takes what the last
// call decoded from the same resource and bytes, and done, which keeps
// this call's objects for the next. The objects returned are shared
// between calls: read them only.
func (c *decodeCache) decoder() (decode func(res schema.GroupVersionResource, raw []byte, into any) (any, error), done func()) {
	c.mu.Lock()
	next := map[schema.GroupVersionResource]map[string]any{}
	decode = func(res schema.GroupVersionResource, raw []byte, into any) (any, error) {
		keep := next[res]
		if keep == nil {
			keep = map[string]any{}
			next[res] = keep
		}
		if v, ok := c.last[res][string(raw)]; ok {
			keep[string(raw)] = v
			return v, nil
		}
		if err := json.Unmarshal(raw, into); err != nil {
			return nil, err
		}
		keep[string(raw)] = into
		return into, nil
	}
	return decode, func() {
		c.last = next
		c.mu.Unlock()
	}
}

var (
	_ sim.Subject          = (*Subject)(nil)
	_ sim.Converger        = (*Subject)(nil)
	_ sim.CacheSnapshotter = (*Subject)(nil)
)

// NewSubject returns a Subject that builds a Controller with opts (overlaid
// with the plan's subject parameters) at every start.
func NewSubject(opts Options) *Subject { return &Subject{opts: opts} }

// Start builds the Controller and runs it until ctx is cancelled. It returns
// once the informers and the waiting for sync have started.
func (s *Subject) Start(ctx context.Context, env sim.Env) error {
	opts, err := s.opts.WithParams(env.Params)
	if err != nil {
		return err
	}
	c, err := NewController(ctx, env, opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
	go func() { _ = c.Run(ctx) }()
	return nil
}

// SnapshotCaches returns the content of the controller's three informer
// stores, each named by its resource as the handler records name it.
func (s *Subject) SnapshotCaches() []sim.CacheSnapshot {
	s.mu.Lock()
	c := s.c
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	var out []sim.CacheSnapshot
	for _, x := range []struct {
		resource string
		inf      cache.SharedIndexInformer
	}{{ResourceBellerophons, c.bphInformer}, {ResourcePods, c.podInformer}, {ResourceConfigMaps, c.cmInformer}} {
		snap := sim.CacheSnapshot{Name: x.resource}
		for _, obj := range x.inf.GetStore().List() {
			if st, ok := sim.ObjectStateOf(x.resource, obj); ok {
				snap.Objects = append(snap.Objects, st)
			}
		}
		out = append(out, snap)
	}
	return out
}

// Desired reports whether the server's state is what the controller wants:
// every live Bellerophon carries the finalizer, has exactly spec.replicas
// live owned Pods, all of image bellerophon:<spec.version> and Ready, a
// ConfigMap whose data is spec.config, and a status with the current
// observedGeneration, readyReplicas == spec.replicas, Ready True and
// Degraded not True; no
// Pod or ConfigMap is controlled by a Bellerophon that no longer exists;
// no Bellerophon with the finalizer is left terminating.
func (s *Subject) Desired(objs []sim.ServerObject) (bool, string) {
	decode, done := s.decoded.decoder()
	defer done()
	return desired(objs, decode)
}

// Desired is Subject.Desired as a function.
func Desired(objs []sim.ServerObject) (bool, string) {
	return desired(objs, func(_ schema.GroupVersionResource, raw []byte, into any) (any, error) {
		return into, json.Unmarshal(raw, into)
	})
}

// desired is Desired with the objects decoded by decode (which decodes raw
// into into, or returns an object it decoded from the same resource and
// bytes before).
func desired(objs []sim.ServerObject, decode func(res schema.GroupVersionResource, raw []byte, into any) (any, error)) (bool, string) {
	var bphs []*v1alpha1.Bellerophon
	var pods []*corev1.Pod
	var cms []*corev1.ConfigMap
	for _, o := range objs {
		switch {
		case o.Resource == v1alpha1.Resource:
			b, err := decode(o.Resource, o.Object, &v1alpha1.Bellerophon{})
			if err != nil {
				return false, fmt.Sprintf("a Bellerophon does not decode: %v", err)
			}
			bphs = append(bphs, b.(*v1alpha1.Bellerophon))
		case o.Resource == podsGVR:
			p, err := decode(o.Resource, o.Object, &corev1.Pod{})
			if err != nil {
				return false, fmt.Sprintf("a Pod does not decode: %v", err)
			}
			pods = append(pods, p.(*corev1.Pod))
		case o.Resource == configMapsGVR:
			cm, err := decode(o.Resource, o.Object, &corev1.ConfigMap{})
			if err != nil {
				return false, fmt.Sprintf("a ConfigMap does not decode: %v", err)
			}
			cms = append(cms, cm.(*corev1.ConfigMap))
		}
	}
	sort.Slice(bphs, func(i, j int) bool {
		return bphs[i].Namespace+"/"+bphs[i].Name < bphs[j].Namespace+"/"+bphs[j].Name
	})

	exists := map[types.UID]bool{}
	for _, b := range bphs {
		exists[b.UID] = true
	}
	podsOf := map[types.UID][]*corev1.Pod{}
	for _, p := range pods {
		ref := bellerophonRef(p)
		if ref == nil {
			continue
		}
		if !exists[ref.UID] {
			return false, fmt.Sprintf("Pod %s/%s belongs to a deleted Bellerophon %s (UID %s)", p.Namespace, p.Name, ref.Name, ref.UID)
		}
		if p.DeletionTimestamp == nil {
			podsOf[ref.UID] = append(podsOf[ref.UID], p)
		}
	}
	cmOf := map[types.UID]*corev1.ConfigMap{}
	for _, cm := range cms {
		ref := bellerophonRef(cm)
		if ref == nil {
			continue
		}
		if !exists[ref.UID] {
			return false, fmt.Sprintf("ConfigMap %s/%s belongs to a deleted Bellerophon %s (UID %s)", cm.Namespace, cm.Name, ref.Name, ref.UID)
		}
		if cm.Name == ConfigMapName(ref.Name) {
			cmOf[ref.UID] = cm
		}
	}

	for _, b := range bphs {
		id := b.Namespace + "/" + b.Name
		has := false
		for _, f := range b.Finalizers {
			has = has || f == FinalizerName
		}
		if b.DeletionTimestamp != nil {
			if has {
				return false, fmt.Sprintf("Bellerophon %s is terminating and still carries %s", id, FinalizerName)
			}
			continue
		}
		if !has {
			return false, fmt.Sprintf("Bellerophon %s lacks the finalizer %s", id, FinalizerName)
		}
		own := podsOf[b.UID]
		if int32(len(own)) != b.Spec.Replicas {
			return false, fmt.Sprintf("Bellerophon %s has %d Pods, want %d", id, len(own), b.Spec.Replicas)
		}
		for _, p := range own {
			if len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Image != Image(b.Spec.Version) {
				return false, fmt.Sprintf("Pod %s/%s of %s does not run %s", p.Namespace, p.Name, id, Image(b.Spec.Version))
			}
			if !podReady(p) {
				return false, fmt.Sprintf("Pod %s/%s of %s is not Ready", p.Namespace, p.Name, id)
			}
		}
		cm := cmOf[b.UID]
		if cm == nil {
			return false, fmt.Sprintf("Bellerophon %s has no ConfigMap %s", id, ConfigMapName(b.Name))
		}
		if !sameData(cm.Data, b.Spec.Config) {
			return false, fmt.Sprintf("ConfigMap %s/%s does not match the spec.config of %s", cm.Namespace, cm.Name, id)
		}
		st := b.Status
		if st.ObservedGeneration != b.Generation {
			return false, fmt.Sprintf("Bellerophon %s status.observedGeneration = %d, want %d", id, st.ObservedGeneration, b.Generation)
		}
		if st.ReadyReplicas != b.Spec.Replicas {
			return false, fmt.Sprintf("Bellerophon %s status.readyReplicas = %d, want %d", id, st.ReadyReplicas, b.Spec.Replicas)
		}
		if !meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady) {
			return false, fmt.Sprintf("Bellerophon %s is not Ready in its status", id)
		}
		if meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionDegraded) {
			return false, fmt.Sprintf("Bellerophon %s is Degraded in its status", id)
		}
	}
	return true, fmt.Sprintf("%d Bellerophons converged", countLive(bphs))
}

func countLive(bphs []*v1alpha1.Bellerophon) int {
	n := 0
	for _, b := range bphs {
		if b.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// CRD is the sim.CRD the server must serve for Bellerophon: namespaced,
// with a status subresource, pruned, defaulted and validated by the
// manifest's openAPIV3Schema (config.CRDManifest) through
// apiextensions-apiserver's code in fakeapi's store, as kube-apiserver and
// `cachelab serve --crd` do, so invalid objects get 422 with kube-apiserver's causes.
func CRD() sim.CRD {
	c := sim.CRD{
		GVR:        v1alpha1.Resource,
		Kind:       v1alpha1.Kind,
		ListKind:   v1alpha1.ListKind,
		Namespaced: true,
		HasStatus:  true,
	}
	var crd map[string]any
	if err := yaml.Unmarshal(config.CRDManifest, &crd); err == nil {
		versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
		if len(versions) == 1 {
			if v, ok := versions[0].(map[string]any); ok {
				c.OpenAPIV3Schema, _, _ = unstructured.NestedMap(v, "schema", "openAPIV3Schema")
			}
		}
	}
	if c.OpenAPIV3Schema == nil {
		c.Validate = v1alpha1.Validate // the manifest did not read: its Go mirror
	}
	return c
}

// SubjectName is the registry name of the correct controller; mutants are
// SubjectName + "/" + the Bug.
const SubjectName = "bellerophon"

func init() {
	sim.RegisterSubject(sim.SubjectInfo{
		Name:    SubjectName,
		Summary: "Bellerophon: a sample-controller style operator owning Pods and a ConfigMap, with expectations, UID checks, a finalizer and status.",
		CRDs:    []sim.CRD{CRD()},
		New:     func() sim.Subject { return NewSubject(Options{}) },
	})
	for _, b := range Bugs {
		sim.RegisterSubject(sim.SubjectInfo{
			Name:    SubjectName + "/" + string(b.Bug),
			Summary: b.Summary,
			Mutant:  true,
			Source:  b.Source,
			CRDs:    []sim.CRD{CRD()},
			New:     func() sim.Subject { return NewSubject(Options{Bug: b.Bug}) },
		})
	}
}
