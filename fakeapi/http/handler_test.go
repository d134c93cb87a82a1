package http_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// do serves one request with the handler and returns the recorder.
func do(h http.Handler, method, path, accept, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// status decodes a Status body, failing if the body is not one.
func status(t *testing.T, w *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var st metav1.Status
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type = %q, want application/json", ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("body %q is not a v1 Status: %v", w.Body.String(), err)
	}
	if int(st.Code) != w.Code {
		t.Fatalf("Status code %d != HTTP code %d", st.Code, w.Code)
	}
	return st
}

// seeded returns a handler on a server with namespace a, configmap a/one
// and foo a/f.
func seeded(t *testing.T) (http.Handler, *fakeapi.Server) {
	t.Helper()
	e := newEnv(t, fakeapi.Options{})
	h := fakehttp.NewHandler(e.srv, fakehttp.Options{})
	for _, req := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"metadata":{"name":"a","namespace":"ignored-for-cluster-scoped"}}`},
		{"/api/v1/namespaces/a/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one"}}`},
		{"/apis/example.com/v1/namespaces/a/foos", `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"f"}}`},
	} {
		if w := do(h, "POST", req.path, "", "application/json", req.body); w.Code != 201 {
			t.Fatalf("POST %s = %d %s", req.path, w.Code, w.Body)
		}
	}
	return h, e.srv
}

// TestErrorsAreStatusBodiesWithTheirCodes: every failure, routed or not, is
// a v1 Status in JSON whose code is the HTTP code.
func TestErrorsAreStatusBodiesWithTheirCodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := seeded(t)
		for _, c := range []struct {
			method, path, ct, body string
			code                   int
			reason                 metav1.StatusReason
		}{
			{"GET", "/nope", "", "", 404, metav1.StatusReasonNotFound},
			{"GET", "/api/v2/pods", "", "", 404, metav1.StatusReasonNotFound},
			{"GET", "/api/v1/widgets", "", "", 404, metav1.StatusReasonNotFound},
			{"GET", "/api/v1/configmaps/one", "", "", 404, metav1.StatusReasonNotFound},
			{"GET", "/api/v1/namespaces/a/configmaps/missing", "", "", 404, metav1.StatusReasonNotFound},
			{"GET", "/api/v1/namespaces/a/configmaps/one/status", "", "", 404, metav1.StatusReasonNotFound},
			{"POST", "/api/v1/namespaces/a/configmaps/one", "application/json", "{}", 405, metav1.StatusReasonMethodNotAllowed},
			{"OPTIONS", "/api/v1/namespaces/a/configmaps", "", "", 405, metav1.StatusReasonMethodNotAllowed},
			{"POST", "/api/v1/namespaces/a/configmaps", "application/json", "", 400, metav1.StatusReasonBadRequest},
			{"POST", "/api/v1/namespaces/a/configmaps", "application/json", "{", 400, metav1.StatusReasonBadRequest},
			{"POST", "/api/v1/namespaces/a/configmaps", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
			{"POST", "/api/v1/namespaces/a/configmaps", "text/plain", "x", 415, metav1.StatusReasonUnsupportedMediaType},
			{"POST", "/api/v1/namespaces/a/configmaps", "application/json", `{"metadata":{"name":"one"}}`, 409, metav1.StatusReasonAlreadyExists},
			{"PUT", "/api/v1/namespaces/a/configmaps/one", "application/json", `{"metadata":{"name":"two"}}`, 400, metav1.StatusReasonBadRequest},
			{"PATCH", "/api/v1/namespaces/a/configmaps/one", "application/apply-patch+yaml", `{}`, 422, metav1.StatusReasonInvalid}, // no fieldManager
			{"GET", "/api/v1/namespaces/a/configmaps?limit=x", "", "", 400, metav1.StatusReasonBadRequest},
			{"GET", "/api/v1/namespaces/a/configmaps?resourceVersion=99999", "", "", 504, metav1.StatusReasonTimeout},
			{"DELETE", "/api/v1/namespaces/a/configmaps/one", "application/json", `{"preconditions":{"uid":"x"}}`, 409, metav1.StatusReasonConflict},
		} {
			w := do(h, c.method, c.path, "", c.ct, c.body)
			if w.Code != c.code {
				t.Errorf("%s %s: code %d (%s), want %d", c.method, c.path, w.Code, w.Body, c.code)
				continue
			}
			if st := status(t, w); st.Reason != c.reason || st.Status != metav1.StatusFailure {
				t.Errorf("%s %s: Status reason %q status %q, want %q Failure", c.method, c.path, st.Reason, st.Status, c.reason)
			}
		}
	})
}

// TestNegotiationServesProtobufForBuiltinsAndRefusesItForCustomResources:
// protobuf is answered for built-in kinds; a protobuf-only Accept on a
// custom resource is 406, and client-go's default Accept (protobuf, then
// */*) falls back to JSON.
func TestNegotiationServesProtobufForBuiltinsAndRefusesItForCustomResources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := seeded(t)
		const pb = "application/vnd.kubernetes.protobuf"
		w := do(h, "GET", "/api/v1/namespaces/a/configmaps/one", pb, "", "")
		if w.Code != 200 || w.Header().Get("Content-Type") != pb || !bytes.HasPrefix(w.Body.Bytes(), []byte("k8s\x00")) {
			t.Errorf("configmap in protobuf: %d %q %q, want 200 protobuf with the k8s magic", w.Code, w.Header().Get("Content-Type"), w.Body.Bytes()[:min(4, w.Body.Len())])
		}
		w = do(h, "GET", "/apis/example.com/v1/namespaces/a/foos/f", pb, "", "")
		if w.Code != 406 || status(t, w).Reason != metav1.StatusReasonNotAcceptable {
			t.Errorf("custom resource with a protobuf-only Accept: %d %s, want 406 NotAcceptable", w.Code, w.Body)
		}
		w = do(h, "GET", "/apis/example.com/v1/namespaces/a/foos/f", pb+", */*", "", "")
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("custom resource with client-go's default Accept: %d %q, want 200 JSON", w.Code, w.Header().Get("Content-Type"))
		}
		w = do(h, "GET", "/api/v1/namespaces/a/configmaps?watch=true&timeoutSeconds=1", pb, "", "")
		if w.Code != 200 || w.Header().Get("Content-Type") != pb+";stream=watch" || w.Body.Len() < 4 {
			t.Errorf("protobuf watch: %d %q (%d bytes), want 200 %s;stream=watch with a frame", w.Code, w.Header().Get("Content-Type"), w.Body.Len(), pb)
		}
		w = do(h, "GET", "/apis/example.com/v1/foos?watch=true&timeoutSeconds=1", pb, "", "")
		if w.Code != 406 {
			t.Errorf("protobuf-only watch of a custom resource: %d, want 406", w.Code)
		}
		w = do(h, "GET", "/api/v1/namespaces/a/configmaps", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", "", "")
		if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `"kind":"PartialObjectMetadataList"`) || !strings.Contains(body, `"name":"one"`) || strings.Contains(body, `"data"`) {
			t.Errorf("metadata-only list: %d %s, want a PartialObjectMetadataList without data", w.Code, body)
		}
		w = do(h, "GET", "/api/v1/namespaces/a/configmaps/one", "application/yaml", "", "")
		if w.Code != 200 || !strings.Contains(w.Body.String(), "kind: ConfigMap") {
			t.Errorf("configmap in YAML: %d %s", w.Code, w.Body)
		}
	})
}

// TestTableResponsesHaveNameAndAgeColumns: kubectl's Accept for tables
// gets a meta.k8s.io/v1 Table with Name and Age columns, one row per
// object, each carrying the object's metadata.
func TestTableResponsesHaveNameAndAgeColumns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := seeded(t)
		time.Sleep(5 * time.Minute)
		const kubectlAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
		for _, path := range []string{"/api/v1/namespaces/a/configmaps", "/api/v1/namespaces/a/configmaps/one", "/apis/example.com/v1/foos"} {
			w := do(h, "GET", path, kubectlAccept, "", "")
			var tbl metav1.Table
			if err := json.Unmarshal(w.Body.Bytes(), &tbl); w.Code != 200 || err != nil || tbl.Kind != "Table" {
				t.Fatalf("GET %s as Table: %d %s (%v)", path, w.Code, w.Body, err)
			}
			var cols []string
			for _, c := range tbl.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if !slices.Equal(cols, []string{"Name", "Age"}) || len(tbl.Rows) != 1 {
				t.Fatalf("GET %s: columns %v, %d rows; want [Name Age] and 1 row", path, cols, len(tbl.Rows))
			}
			want := "one"
			if strings.Contains(path, "foos") {
				want = "f"
			}
			if got := tbl.Rows[0].Cells; len(got) != 2 || got[0] != want || got[1] != "5m" {
				t.Errorf("GET %s: row cells %v, want [%s 5m]", path, got, want)
			}
			var pom metav1.PartialObjectMetadata
			if err := json.Unmarshal(tbl.Rows[0].Object.Raw, &pom); err != nil || pom.Name != want || pom.Namespace != "a" {
				t.Errorf("GET %s: row object %s, want metadata of a/%s", path, tbl.Rows[0].Object.Raw, want)
			}
		}
	})
}

// TestDiscoveryOverThePipeListsEveryServedResourceAndTheVersion: client-go's
// discovery client, aggregated (its default) and legacy, finds every
// resource, subresources and the CRD included; /version answers the
// configured version.
func TestDiscoveryOverThePipeListsEveryServedResourceAndTheVersion(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "aggregated", true: "legacy"}[legacy], func(t *testing.T) {
			testDiscovery(t, legacy)
		})
	}
}

func testDiscovery(t *testing.T, legacy bool) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, fakeapi.Options{})
		dc, err := discovery.NewDiscoveryClientForConfig(e.pipe.RESTConfig("discovery"))
		if err != nil {
			t.Fatal(err)
		}
		dc.UseLegacyDiscovery = legacy
		h := fakehttp.NewHandler(e.srv, fakehttp.Options{})
		for _, path := range []string{"/api", "/apis"} {
			w := do(h, "GET", path, discovery.AcceptV2+","+discovery.AcceptV1, "", "")
			if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != fakehttp.AggregatedDiscoveryContentType {
				t.Errorf("GET %s with client-go's Accept: %d %q, want 200 aggregated", path, w.Code, ct)
			}
			w = do(h, "GET", path, discovery.AcceptV1, "", "")
			if ct := w.Header().Get("Content-Type"); w.Code != 200 || ct != "application/json" {
				t.Errorf("GET %s with the legacy Accept: %d %q, want 200 application/json", path, w.Code, ct)
			}
		}
		v, err := dc.ServerVersion()
		if err != nil || v.GitVersion != fakehttp.DefaultVersion.GitVersion {
			t.Fatalf("version = %+v, %v", v, err)
		}
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range lists {
			for _, r := range l.APIResources {
				got = append(got, l.GroupVersion+" "+r.Name)
			}
		}
		var want []string
		for _, r := range e.srv.Resources() {
			want = append(want, r.GVR.GroupVersion().String()+" "+r.GVR.Resource)
			if r.HasStatus {
				want = append(want, r.GVR.GroupVersion().String()+" "+r.GVR.Resource+"/status")
			}
			if e.srv.HasScale(r.GVR) {
				want = append(want, r.GVR.GroupVersion().String()+" "+r.GVR.Resource+"/scale")
			}
			if r.GVR.Resource == "serviceaccounts" {
				want = append(want, "v1 serviceaccounts/token")
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("discovered %v, want %v", got, want)
		}
		if !slices.Contains(got, "example.com/v1 foos") || !slices.Contains(got, "v1 pods/status") {
			t.Errorf("discovered %v, want the CRD and pods/status among them", got)
		}
	})
}

// TestOpenAPIV3ListsEveryGroupVersionWithPatchGVKs: /openapi/v3 names a
// document per served group version; each document's PATCH operations
// carry the kind and the fieldValidation parameter kubectl looks for.
func TestOpenAPIV3ListsEveryGroupVersionWithPatchGVKs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := seeded(t)
		w := do(h, "GET", "/openapi/v3", "", "", "")
		var root struct {
			Paths map[string]struct{ ServerRelativeURL string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &root); w.Code != 200 || err != nil {
			t.Fatalf("/openapi/v3: %d %s", w.Code, w.Body)
		}
		for _, gv := range []string{"api/v1", "apis/events.k8s.io/v1", "apis/example.com/v1"} {
			if root.Paths[gv].ServerRelativeURL == "" {
				t.Errorf("/openapi/v3 lacks %s: %s", gv, w.Body)
			}
		}
		w = do(h, "GET", root.Paths["apis/example.com/v1"].ServerRelativeURL, "application/json", "", "")
		body := w.Body.String()
		if w.Code != 200 || !strings.Contains(body, `"/apis/example.com/v1/namespaces/{namespace}/foos/{name}"`) ||
			!strings.Contains(body, `"kind":"Foo"`) || !strings.Contains(body, `"name":"fieldValidation"`) {
			t.Errorf("example.com/v1 document: %d %s", w.Code, body)
		}
		if w := do(h, "GET", "/openapi/v3/apis/nope/v1", "", "", ""); w.Code != 404 {
			t.Errorf("document of an unserved group version: %d, want 404", w.Code)
		}
	})
}

// TestDeleteAnswersTheObjectWhileFinalizersHoldIt: as kube-apiserver, a
// delete that only marks the object (finalizers) answers the object (202
// with orphanDependents=false), and a delete that removes it answers a
// Success Status.
func TestDeleteAnswersTheObjectWhileFinalizersHoldIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := seeded(t)
		for _, name := range []string{"held", "held2"} {
			if w := do(h, "POST", "/api/v1/namespaces/a/configmaps", "", "application/json",
				`{"metadata":{"name":"`+name+`","finalizers":["example.com/hold"]}}`); w.Code != 201 {
				t.Fatalf("create %s: %d %s", name, w.Code, w.Body)
			}
		}
		w := do(h, "DELETE", "/api/v1/namespaces/a/configmaps/held", "", "", "")
		if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `"kind":"ConfigMap"`) || !strings.Contains(body, `"deletionTimestamp"`) {
			t.Errorf("delete with a finalizer: %d %s, want 200 and the marked object", w.Code, body)
		}
		w = do(h, "DELETE", "/api/v1/namespaces/a/configmaps/held2", "", "application/json", `{"orphanDependents":false}`)
		if w.Code != 202 {
			t.Errorf("delete with a finalizer and orphanDependents=false: %d, want 202", w.Code)
		}
		w = do(h, "DELETE", "/api/v1/namespaces/a/configmaps/one", "", "", "")
		var st metav1.Status
		if err := json.Unmarshal(w.Body.Bytes(), &st); w.Code != 200 || err != nil || st.Status != metav1.StatusSuccess || st.Details.Name != "one" {
			t.Errorf("delete: %d %s, want 200 and a Success Status naming one", w.Code, w.Body)
		}
		// The registry's Status has no code (fidelity case
		// status-delete-success), and names the resource as its kind.
		var raw map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		if _, has := raw["code"]; has || st.Details.Kind != "configmaps" || st.Details.UID == "" {
			t.Errorf("delete Status %s: want no code, details.kind configmaps and the uid", w.Body)
		}
	})
}
