package cachelabtest

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// Client is a client of the fake API server under a name of its own, for
// a helper actor the controller's test starts beside it (Env.Client).
type Client struct {
	// Name is the client's name: its requests, writes and watches carry it
	// in the trace and the report, and faults aimed at the controller do
	// not hit it.
	Name string
	// RESTConfig reaches the fake API server as Name, for clients built
	// with NewForConfig (a generated clientset, controller-runtime).
	RESTConfig *rest.Config
	// Kube is a typed clientset built on RESTConfig.
	Kube kubernetes.Interface
	// Dynamic is a dynamic client built on RESTConfig.
	Dynamic dynamic.Interface
}

// Client returns clients of the fake API server named name, for a helper
// actor that the test starts from the controller's Start: a stand-in for a
// controller of the cluster (one that makes a Deployment's status follow
// its spec), or another writer competing with the controller. Its
// requests are traced as name's, not the controller's: the invariants
// judge the controller's own reads and writes, a helper's writes are
// another writer's (as a competitor's), and the faults a plan aims at the
// controller (held watches, failed writes) leave the helper alone. The
// helper is part of the controller's process: it stops when ctx ends, at
// a crash, and starts again at the restart, with the controller.
//
// name must be neither empty nor the controller's own name. The client
// goes through the same REST handler as Env.RESTConfig (its requests are
// named by fakeapi/http's client header).
func (e *Env) Client(name string) (*Client, error) {
	if name == "" || name == e.Name {
		return nil, fmt.Errorf("cachelabtest: Env.Client(%q): give a name other than the controller's (%q)", name, e.Name)
	}
	if e.RESTConfig == nil {
		return nil, fmt.Errorf("cachelabtest: Env.Client(%q): the Env has no RESTConfig (not in a run)", name)
	}
	cfg := fakehttp.ConfigAs(e.RESTConfig, name)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cachelabtest: Env.Client(%q): %w", name, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cachelabtest: Env.Client(%q): %w", name, err)
	}
	return &Client{Name: name, RESTConfig: cfg, Kube: kube, Dynamic: dyn}, nil
}
