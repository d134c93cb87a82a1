package http

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"strings"
	"sync"
)

// recordedDocs holds OpenAPI v3 documents recorded from a real
// kube-apiserver (openapi/README.md says which version and how), one
// gzipped file per group version: api__v1.json.gz is /openapi/v3/api/v1,
// apis__events.k8s.io__v1.json.gz is /openapi/v3/apis/events.k8s.io/v1.
//
//go:embed openapi
var recordedDocs embed.FS

var (
	recordedOnce sync.Once
	recorded     map[string][]byte
)

// recordedOpenAPI returns the recorded document for gvPath ("api/v1",
// "apis/G/V"), or nil.
func recordedOpenAPI(gvPath string) []byte {
	recordedOnce.Do(func() {
		recorded = map[string][]byte{}
		entries, _ := recordedDocs.ReadDir("openapi")
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".json.gz")
			if !ok {
				continue
			}
			gz, err := recordedDocs.ReadFile("openapi/" + e.Name())
			if err != nil {
				continue
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				continue
			}
			doc, err := io.ReadAll(zr)
			if err != nil {
				continue
			}
			recorded[strings.ReplaceAll(name, "__", "/")] = doc
		}
	})
	return recorded[gvPath]
}
