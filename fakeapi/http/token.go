package http

import (
	"fmt"
	nethttp "net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// serviceAccountsGVR is core/v1 serviceaccounts, whose token subresource
// the handler serves.
var serviceAccountsGVR = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

// tokenRequestKind is the kind serviceaccounts/token takes and answers.
var tokenRequestKind = &metav1.GroupVersionKind{Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest"}

// serveToken answers POST serviceaccounts/NAME/token (201 with the
// TokenRequest and its token); any other method is 405, as the
// subresource only creates.
func (h *handler) serveToken(w nethttp.ResponseWriter, req *request) {
	r := req.r
	if r.Method != nethttp.MethodPost {
		// As kube-apiserver answers a verb a subresource lacks: no details.
		h.writeError(w, r, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: nethttp.StatusMethodNotAllowed,
			Reason: metav1.StatusReasonMethodNotAllowed, Message: "the server does not allow this method on the requested resource"}})
		return
	}
	body, err := readBody(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var tr authenticationv1.TokenRequest
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &tr); err != nil {
		h.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the body is not an authentication.k8s.io/v1 TokenRequest: %v", err)))
		return
	}
	out, err := req.client.CreateToken(r.Context(), req.ns, req.name, &tr)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out.GetObjectKind().SetGroupVersionKind(authenticationv1.SchemeGroupVersion.WithKind("TokenRequest"))
	req.typed = true
	h.writeObject(w, req, nethttp.StatusCreated, out)
}
