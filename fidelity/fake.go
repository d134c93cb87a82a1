package fidelity

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/subjects/bellerophon/config"
)

// CRDManifest is the CustomResourceDefinition the corpus's custom
// resources use (Bellerophon's), applied as is to the real server.
var CRDManifest = config.CRDManifest

// NewFakeServer returns a fake API server serving what the corpus uses:
// the built-ins and the CRDs (Bellerophon's CRDManifest, GadgetCRDManifest),
// registered with their openAPIV3Schemas, which the fake's store prunes, defaults and
// validates with apiextensions-apiserver's code (the path `cachelab serve
// --crd` takes too). It is configured as the recording's real server is,
// whatever opts say of these: NamespaceLifecycle (an admission plugin on by
// default), DefaultServiceAccounts (kube-controller-manager's
// serviceaccount controller) and TrackManagedFields (managedFields on
// every write) are on, as `cachelab serve` has them; a corpus of one's own
// then compares with the same server the lab's corpus does.
func NewFakeServer(opts fakeapi.Options) (*fakeapi.Server, error) {
	opts.NamespaceLifecycle, opts.DefaultServiceAccounts, opts.TrackManagedFields = true, true, true
	srv := fakeapi.NewServer(opts)
	for _, m := range crdManifests {
		if err := srv.RegisterCRDManifest(m); err != nil {
			return nil, fmt.Errorf("fidelity: register the CRD: %w", err)
		}
	}
	return srv, nil
}

// createNamespace creates ns through cfg (setup, not recorded).
func createNamespace(ctx context.Context, cfg *rest.Config, ns string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("fidelity: create namespace %s: %w", ns, err)
	}
	return nil
}
