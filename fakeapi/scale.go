package fakeapi

import (
	"context"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// HasScale reports whether gvr has a scale subresource (apps/v1
// Deployments, ReplicaSets and StatefulSets).
func (s *Server) HasScale(gvr schema.GroupVersionResource) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.HasScale(gvr)
}

// ReturnsDeletedObject reports whether a delete of gvr answers the deleted
// object (serviceaccounts) rather than a Status, as kube-apiserver's
// registry does.
func (s *Server) ReturnsDeletedObject(gvr schema.GroupVersionResource) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.ReturnsDeletedObject(gvr)
}

// Exists reports whether ns/name of gvr exists now (no request: hooks and
// observers see nothing).
func (s *Server) Exists(gvr schema.GroupVersionResource, ns, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.st.Get(gvr, ns, name, metav1.GetOptions{})
	return err == nil
}

// GetScale reads the scale subresource of an object.
func (c *Client) GetScale(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*autoscalingv1.Scale, error) {
	if ctx != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	req := c.request("get", gvr, "scale", ns, name)
	s := c.s
	f := s.hooks.BeforeRequest(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Err != nil {
		return nil, c.failLocked(&req, f)
	}
	sc, err := s.st.GetScale(gvr, ns, name)
	c.answerLocked(&req, err, http.StatusOK)
	return sc, err
}

// UpdateScale sets spec.replicas through the scale subresource.
func (c *Client) UpdateScale(ctx context.Context, gvr schema.GroupVersionResource, ns string, sc *autoscalingv1.Scale, opts metav1.UpdateOptions) (*autoscalingv1.Scale, error) {
	name := ""
	if sc != nil {
		name = sc.Name
	}
	req := c.request("update", gvr, "scale", ns, name)
	out, err := c.write(ctx, req, http.StatusOK, func(st *store.Store) (runtime.Object, []store.Event, error) {
		return scaleResult(st.UpdateScale(gvr, ns, sc, opts))
	})
	if err != nil {
		return nil, err
	}
	return out.(*autoscalingv1.Scale), nil
}

// PatchScale patches the scale subresource (JSON merge or JSON patch).
func (c *Client) PatchScale(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*autoscalingv1.Scale, error) {
	req := c.request("patch", gvr, "scale", ns, name)
	out, err := c.write(ctx, req, http.StatusOK, func(st *store.Store) (runtime.Object, []store.Event, error) {
		return scaleResult(st.PatchScale(gvr, ns, name, pt, data, opts))
	})
	if err != nil {
		return nil, err
	}
	return out.(*autoscalingv1.Scale), nil
}

func scaleResult(sc *autoscalingv1.Scale, evs []store.Event, err error) (runtime.Object, []store.Event, error) {
	if err != nil {
		return nil, nil, err
	}
	return sc, evs, nil
}
