package fakeapi_test

import (
	"context"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestServerOptionsExternalGCReachTheStore: fakeapi.Options.ExternalGC
// is the store's: an owner's delete leaves its dependent to a client;
// without it the dependent goes in the same call.
func TestServerOptionsExternalGCReachTheStore(t *testing.T) {
	for _, external := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) { serverExternalGC(t, external) })
	}
}

// serverExternalGC deletes an owner on a server with ExternalGC set to
// external and checks whether its dependent is kept.
func serverExternalGC(t *testing.T, external bool) {
	s := fakeapi.NewServer(fakeapi.Options{ExternalGC: external})
	c := s.Client("writer")
	owner := mustCreateCM(t, c, "ns", "owner", nil)
	dep := configMap("ns", "dep", nil)
	dep.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}
	if _, err := c.Create(context.Background(), cmGVR, "ns", dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), cmGVR, "ns", "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Get(context.Background(), cmGVR, "ns", "dep", metav1.GetOptions{})
	if kept := err == nil; kept != external {
		t.Errorf("ExternalGC %v: dependent kept after its owner's delete = %v (get: %v), want %v", external, kept, err, external)
	}
	s.Close()
}
