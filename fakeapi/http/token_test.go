package http_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestServiceAccountTokenSubresourceIssuesTokens: client-go's
// CreateToken (POST serviceaccounts/NAME/token, protobuf) gets a 201
// TokenRequest with the defaults (the issuer as audience, 3600 s), a JWT
// whose claims name the account and expire when the status says; a
// missing account is 404 and an expiration under 10 minutes is 422 (the
// fake answered 404 for the subresource before, issue 29).
func TestServiceAccountTokenSubresourceIssuesTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		cs := e.clientset(t, "operator")
		ctx := context.Background()
		if _, err := cs.CoreV1().ServiceAccounts("a").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("a").CreateToken(ctx, "sa", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Spec.ExpirationSeconds == nil || *tr.Spec.ExpirationSeconds != 3600 || len(tr.Spec.Audiences) != 1 {
			t.Errorf("spec = %+v, want the defaults", tr.Spec)
		}
		if want := time.Now().Add(time.Hour).Truncate(time.Second); !tr.Status.ExpirationTimestamp.Time.Equal(want) {
			t.Errorf("expires %v, want %v", tr.Status.ExpirationTimestamp, want)
		}
		parts := strings.Split(tr.Status.Token, ".")
		if len(parts) != 3 {
			t.Fatalf("token %q is not a JWT", tr.Status.Token)
		}
		raw, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims struct {
			Sub string `json:"sub"`
			Exp int64  `json:"exp"`
		}
		if err := json.Unmarshal(raw, &claims); err != nil || claims.Sub != "system:serviceaccount:a:sa" || claims.Exp != tr.Status.ExpirationTimestamp.Unix() {
			t.Errorf("claims %+v, %v", claims, err)
		}
		if _, err := cs.CoreV1().ServiceAccounts("a").CreateToken(ctx, "missing", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("token of a missing account: %v, want 404", err)
		}
		short := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](60)}}
		if _, err := cs.CoreV1().ServiceAccounts("a").CreateToken(ctx, "sa", short, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("a 60 s token: %v, want 422", err)
		}
	})
}
