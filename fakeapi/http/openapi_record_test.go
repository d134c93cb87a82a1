package http_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/fakeapi"
)

// TestRecordOpenAPIDocuments is the recorder of fakeapi/http/openapi/, not a
// check: with CACHELAB_RECORD_OPENAPI=DIR (a folder written by
// fidelity/realserver/fetch-openapi.sh: openapi-v3-api-v1.json,
// openapi-v3-apis-G-V.json, VERSION), it keeps the documents of the group
// versions the fake serves, trims each to the paths of served resources
// (and their status subresource) and the schemas those paths reach,
// and writes them gzipped into openapi/ with a README naming the version.
func TestRecordOpenAPIDocuments(t *testing.T) {
	src := os.Getenv("CACHELAB_RECORD_OPENAPI")
	if src == "" {
		t.Skip("recorder: set CACHELAB_RECORD_OPENAPI to a folder of fetch-openapi.sh")
	}
	version, err := os.ReadFile(filepath.Join(src, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeapi.NewServer(fakeapi.Options{}) // Leases are built in
	served := map[string]map[string]bool{}      // "api/v1" -> resources
	for _, r := range srv.Resources() {
		p := "api/" + r.GVR.Version
		if r.GVR.Group != "" {
			p = "apis/" + r.GVR.Group + "/" + r.GVR.Version
		}
		if served[p] == nil {
			served[p] = map[string]bool{}
		}
		served[p][r.GVR.Resource] = true
	}
	var lines []string
	for _, p := range slices.Sorted(maps.Keys(served)) {
		file := filepath.Join(src, "openapi-v3-"+strings.ReplaceAll(p, "/", "-")+".json")
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			lines = append(lines, fmt.Sprintf("- `%s`: not recorded (fetch-openapi.sh does not fetch it): a generated document without schemas", p))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		trimmed, kept, total, err := trimOpenAPI(data, "/"+p+"/", served[p])
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(trimmed)
		zw.Close()
		out := filepath.Join("openapi", strings.ReplaceAll(p, "/", "__")+".json.gz")
		if err := os.WriteFile(out, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("- `%s`: %s, %d of %d paths, %d KB gzipped (%d KB of JSON; the server's document is %d KB)",
			p, filepath.Base(out), kept, total, gz.Len()>>10, len(trimmed)>>10, len(data)>>10))
		t.Logf("%s -> %s: %d of %d paths, %d bytes gzipped", file, out, kept, total, gz.Len())
	}
	readme := fmt.Sprintf(`# Recorded OpenAPI v3 documents

Documents served by `+"`fakeapi/http`"+` on `+"`/openapi/v3/<group version>`"+` for the
built-in group versions the fake serves, recorded from a real kube-apiserver
%s (fidelity/realserver, `+"`fetch-openapi.sh`"+`) on %s. Each file is one
document, gzipped, named after its path with `+"`/` written `__`"+`, trimmed to the
paths of the resources the fake serves (and their status subresource) and
the schemas those paths reach.

%s

Re-record (with a real server running):

    fidelity/realserver/fetch-openapi.sh /tmp/realserver-openapi
    CACHELAB_RECORD_OPENAPI=/tmp/realserver-openapi go test ./fakeapi/http -run TestRecordOpenAPIDocuments
`, strings.TrimSpace(string(version)), time.Now().UTC().Format("2006-01-02"), strings.Join(lines, "\n"))
	if err := os.WriteFile(filepath.Join("openapi", "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trimOpenAPI keeps the paths of doc under prefix whose resource is in
// resources (subresource none or status), and the schemas they reach.
func trimOpenAPI(data []byte, prefix string, resources map[string]bool) (out []byte, kept, total int, err error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, 0, 0, err
	}
	paths, _ := doc["paths"].(map[string]any)
	keptPaths := map[string]any{}
	for p, v := range paths {
		total++
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		segs := strings.Split(rest, "/")
		if segs[0] == "watch" {
			segs = segs[1:]
		}
		if len(segs) >= 3 && segs[0] == "namespaces" && segs[1] == "{namespace}" {
			segs = segs[2:]
		}
		if len(segs) == 0 || !resources[segs[0]] || len(segs) > 3 || (len(segs) == 3 && segs[2] != "status") {
			continue
		}
		keptPaths[p] = v
	}
	doc["paths"] = keptPaths
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	keep := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				if name, ok := strings.CutPrefix(r, "#/components/schemas/"); ok && !keep[name] {
					keep[name] = true
					visit(schemas[name])
				}
			}
			for _, e := range x {
				visit(e)
			}
		case []any:
			for _, e := range x {
				visit(e)
			}
		}
	}
	visit(keptPaths)
	for name := range schemas {
		if !keep[name] {
			delete(schemas, name)
		}
	}
	// Deterministic output: encoding/json sorts map keys.
	out, err = json.Marshal(doc)
	return out, len(keptPaths), total, err
}
