package sim

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// httpEnv gives the subject real REST clients (kubernetes.NewForConfig,
// dynamic.NewForConfig) that reach the server through fakeapi/http's REST
// handler over an in-memory pipe: client-go's whole HTTP stack (request
// building, content negotiation, decoding, the watch stream decoder, retries
// on 429) runs. One pipe serves every process of the subject and is closed
// when the run ends. The other actors (user, kubelet, competitor) stay on
// the direct path.
func (r *run) httpEnv(env Env) (Env, func(schema.GroupVersionResource, string) fakeapi.ListerWatcher, error) {
	cfg := r.restConfig(env.Name)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return env, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return env, nil, err
	}
	env.Kube, env.Dynamic = kube, dyn
	lw := RESTListerWatchers(kube, dyn)
	return env, lw, nil
}

// restConfig returns a rest.Config for client over the run's pipe to
// fakeapi/http's REST handler, making the pipe on first use (one per run,
// closed when the run ends). Env.RESTConfig is one, whatever the access path.
func (r *run) restConfig(client string) *rest.Config {
	if r.pipe == nil {
		r.pipe = fakehttp.NewPipe(fakehttp.NewHandler(r.srv, fakehttp.Options{}))
	}
	return r.pipe.RESTConfig(client)
}

// RESTListerWatchers returns ListerWatchers over real REST clients, as a
// subject's informers want them: typed objects for core/v1 and
// events.k8s.io/v1 (as the direct path delivers them), unstructured ones
// through the dynamic client for everything else (custom resources: the
// lab has no generated clientset for its CRD). The sim's "http" access path
// and the bellerophon binary both build their informers on it.
func RESTListerWatchers(kube kubernetes.Interface, dyn dynamic.Interface) func(schema.GroupVersionResource, string) fakeapi.ListerWatcher {
	return func(gvr schema.GroupVersionResource, ns string) fakeapi.ListerWatcher {
		var rc rest.Interface
		switch gvr.GroupVersion().String() {
		case "v1":
			rc = kube.CoreV1().RESTClient()
		case "events.k8s.io/v1":
			rc = kube.EventsV1().RESTClient()
		}
		if rc != nil {
			return &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					return rc.Get().Namespace(ns).Resource(gvr.Resource).VersionedParams(&o, metav1.ParameterCodec).Do(ctx).Get()
				},
				WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
					o.Watch = true
					return rc.Get().Namespace(ns).Resource(gvr.Resource).VersionedParams(&o, metav1.ParameterCodec).Watch(ctx)
				},
			}
		}
		ri := dyn.Resource(gvr).Namespace(ns)
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return ri.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(ctx, o)
			},
		}
	}
}
