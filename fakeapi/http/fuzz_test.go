package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var fuzzMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// FuzzHandler sends arbitrary methods, paths, query strings, content types,
// Accept headers and bodies to a seeded server's handler. Every request
// must end (watches within their 5s context, virtual time), never panic,
// and every non-2xx answer must be a v1 Status whose code is the HTTP code.
func FuzzHandler(f *testing.F) {
	for _, s := range []struct {
		method                        uint8
		path, query, ct, accept, body string
	}{
		{0, "/api/v1/namespaces/a/configmaps", "labelSelector=a%3Db&limit=1", "", "", ""},
		{0, "/api/v1/namespaces/a/configmaps", "watch=true&allowWatchBookmarks=true&timeoutSeconds=2", "", "", ""},
		{0, "/api/v1/configmaps", "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "", "application/vnd.kubernetes.protobuf", ""},
		{0, "/api/v1/namespaces/a/configmaps", "watch=true&resourceVersion=1", "", "application/json;as=Table;v=v1;g=meta.k8s.io", ""},
		{0, "/apis/example.com/v1/foos", "continue=abc&limit=-1", "", "application/yaml", ""},
		{1, "/api/v1/namespaces/a/configmaps", "dryRun=All", "application/json", "", `{"metadata":{"name":"x"},"data":{"k":"v"}}`},
		{1, "/api/v1/namespaces/a/pods", "", "application/yaml", "", "metadata:\n  name: p\nspec:\n  containers: [{name: c, image: i}]\n"},
		{2, "/api/v1/namespaces/a/configmaps/one", "", "application/json", "", `{"metadata":{"name":"one","resourceVersion":"1"}}`},
		{3, "/api/v1/namespaces/a/configmaps/one", "", "application/json-patch+json", "", `[{"op":"add","path":"/data","value":{"a":"b"}}]`},
		{3, "/apis/example.com/v1/namespaces/a/foos/f/status", "", "application/merge-patch+json", "", `{"status":{"x":1}}`},
		{4, "/api/v1/namespaces/a/configmaps", "fieldSelector=metadata.name%3Done", "application/json", "", `{"propagationPolicy":"Foreground"}`},
		{4, "/api/v1/namespaces/a", "gracePeriodSeconds=0", "", "", ""},
		{0, "/apis", "", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
		{0, "/api/v1/namespaces/a/configmaps/one", "", "", "application/vnd.kubernetes.protobuf;q=0.5, application/json;q=0", ""},
		{0, "/api", "", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", ""},
		{0, "/apis/example.com/v1/foos", "watch=true&timeoutSeconds=1", "", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", ""},
		{0, "/api/v1/namespaces/a/configmaps", "includeObject=Object", "", "application/json;as=Table;v=v1;g=meta.k8s.io", ""},
		{1, "/api/v1/namespaces/a/pods", "", "application/json", "", `{"metadata":{"name":"q"},"spec":{"nodeName":"n","priorityClassName":"system-node-critical","tolerations":[{"operator":"Exists"}],"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"1","memory":"1Gi"}},"volumeMounts":[{"name":"v","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}]},"status":{"podIPs":[{"ip":"10.0.0.1"}]}}`},
		{4, "/api/v1/namespaces/a/pods/q", "gracePeriodSeconds=5", "", "", ""},
		{2, "/apis/coordination.k8s.io/v1/namespaces/a/leases/l", "", "application/json", "", `{"metadata":{"name":"l"},"spec":{"holderIdentity":"x","leaseDurationSeconds":-1,"renewTime":"2026-01-02T03:04:05.000000Z"}}`},
		{1, "/api/v1/namespaces/a/endpoints", "", "application/json", "", `{"metadata":{"name":"e"},"subsets":[{"addresses":[{"ip":"::1"}],"ports":[{"port":0},{"name":"b","port":70000,"protocol":"XTP"}]}]}`},
		{1, "/apis/discovery.k8s.io/v1/namespaces/a/endpointslices", "", "application/json", "", `{"metadata":{"name":"s"},"addressType":"FQDN","endpoints":[{"addresses":["not a name"]}],"ports":[{"port":-1}]}`},
		{1, "/apis/batch/v1/namespaces/a/cronjobs", "", "application/json", "", `{"metadata":{"name":"c"},"spec":{"schedule":"","jobTemplate":{"spec":{"template":{"spec":{"containers":[]}}}}}}`},
		{2, "/api/v1/namespaces/a/events/e", "", "application/json", "", `{"metadata":{"name":"e"},"involvedObject":{"namespace":"b"},"eventTime":"2026-01-02T03:04:05.000000Z","reportingComponent":"bad name!"}`},
	} {
		f.Add(s.method, s.path, s.query, s.ct, s.accept, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method uint8, path, query, ct, accept string, body []byte) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u := &url.URL{Path: path, RawQuery: query}
		synctest.Test(t, func(t *testing.T) {
			h, _ := seeded(t)
			r := httptest.NewRequest(fuzzMethods[int(method)%len(fuzzMethods)], "/", strings.NewReader(string(body)))
			r.URL = u
			r.RequestURI = u.RequestURI()
			if ct != "" {
				r.Header.Set("Content-Type", ct)
			}
			if accept != "" {
				r.Header.Set("Accept", accept)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			w := httptest.NewRecorder()
			start := time.Now()
			func() {
				defer func() {
					if v := recover(); v != nil && v != http.ErrAbortHandler {
						t.Fatalf("%s %s: panic: %v", r.Method, u, v)
					}
				}()
				h.ServeHTTP(w, r.WithContext(ctx))
			}()
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%s %s: took %v, longer than its context", r.Method, u, d)
			}
			if w.Code >= 200 && w.Code < 300 {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != w.Code || st.Status != metav1.StatusFailure {
				t.Fatalf("%s %s: answer %d %q is not a failure Status with that code (%v)", r.Method, u, w.Code, w.Body, err)
			}
		})
	})
}
