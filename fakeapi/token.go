package fakeapi

import (
	"context"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
)

// CreateToken requests a token for the ServiceAccount ns/name (the
// serviceaccounts/token subresource): see store.Store.CreateToken. It
// writes nothing; it is observed as a create of subresource "token".
func (c *Client) CreateToken(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if ctx != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	req := c.request("create", corev1.SchemeGroupVersion.WithResource("serviceaccounts"), "token", ns, name)
	s := c.s
	f := s.hooks.BeforeRequest(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Err != nil {
		return nil, c.failLocked(&req, f)
	}
	out, err := s.st.CreateToken(ns, name, tr)
	c.answerLocked(&req, err, http.StatusCreated)
	return out, err
}
