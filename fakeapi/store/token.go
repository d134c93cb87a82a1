package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The serviceaccounts/token subresource (TokenRequest), as
// pkg/registry/core/serviceaccount/storage/token.go answers it: for an
// existing ServiceAccount, a token for the requested audiences (default:
// the server's API audience, its issuer) valid expirationSeconds (default
// 3600, at least 600). The token is a JWT with the claims kube-apiserver
// puts in it (iss, sub, aud, exp, iat, nbf, kubernetes.io) but signed by
// nothing: nothing in the lab verifies it, and a controller that only
// passes it on or reads its expiry works.

// TokenIssuer is the issuer and default audience of the tokens the store
// issues (fidelity/realserver's --service-account-issuer).
const TokenIssuer = "https://kubernetes.default.svc.cluster.local"

// serviceAccountsGVR is core/v1 serviceaccounts.
var serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// CreateToken issues a token for the ServiceAccount ns/name. Errors: 404
// when the account does not exist, 422 for an invalid request (expiration
// under 10 minutes or over 2^32 seconds, a bound object of the wrong kind).
func (s *Store) CreateToken(ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	r, err := s.resource(serviceAccountsGVR)
	if err != nil {
		return nil, err
	}
	obj, ok := s.load(r, objectKey(ns, name))
	if !ok {
		return nil, apierrors.NewNotFound(r.groupResource(), name)
	}
	sa := obj.(*corev1.ServiceAccount)
	out := tr.DeepCopy()
	if out.Name != "" && out.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", out.Name, name))
	}
	// SetDefaults_TokenRequestSpec.
	if out.Spec.ExpirationSeconds == nil {
		out.Spec.ExpirationSeconds = new(int64)
		*out.Spec.ExpirationSeconds = 3600
	}
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = []string{TokenIssuer}
	}
	// ValidateTokenRequest.
	var errs field.ErrorList
	exp := field.NewPath("spec", "expirationSeconds")
	switch e := *out.Spec.ExpirationSeconds; {
	case e < 10*60:
		errs = append(errs, field.Invalid(exp, e, "may not specify a duration less than 10 minutes"))
	case e > 1<<32:
		errs = append(errs, field.Invalid(exp, e, "may not specify a duration larger than 2^32 seconds"))
	}
	if b := out.Spec.BoundObjectRef; b != nil && b.Kind != "Pod" && b.Kind != "Secret" && b.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "boundObjectRef", "kind"), b.Kind, []string{"Pod", "Secret", "Node"}))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(authenticationv1.SchemeGroupVersion.WithKind("TokenRequest").GroupKind(), tr.Name, errs)
	}
	now := s.now()
	expires := metav1.NewTime(now.Add(time.Duration(*out.Spec.ExpirationSeconds) * time.Second))
	out.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns, UID: sa.UID, CreationTimestamp: now}
	out.Status = authenticationv1.TokenRequestStatus{Token: unsignedJWT(sa, out.Spec.Audiences, now.Time, expires.Time), ExpirationTimestamp: expires}
	return out, nil
}

// unsignedJWT is a JWT with a service account token's claims and no
// signature algorithm ("none").
func unsignedJWT(sa *corev1.ServiceAccount, aud []string, now, exp time.Time) string {
	enc := func(v any) string {
		data, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	claims := map[string]any{
		"iss": TokenIssuer, "aud": aud, "sub": "system:serviceaccount:" + sa.Namespace + ":" + sa.Name,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": exp.Unix(),
		"kubernetes.io": map[string]any{"namespace": sa.Namespace, "serviceaccount": map[string]any{"name": sa.Name, "uid": string(sa.UID)}},
	}
	return enc(map[string]any{"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "."
}
