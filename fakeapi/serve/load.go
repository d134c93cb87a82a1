package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/cachelab/cachelab/fakeapi"
)

var nsGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func detailsWithRetry(gr schema.GroupResource, seconds int) *metav1.StatusDetails {
	return &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, RetryAfterSeconds: int32(seconds)}
}

// readDocs reads every YAML or JSON document of a file as unstructured
// objects (empty documents skipped).
func readDocs(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			items, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
			}
			for j := range items.Items {
				out = append(out, &items.Items[j])
			}
			continue
		}
		out = append(out, u)
	}
}

// loadCRDs registers every served version of the CRDs in a file, with its
// openAPIV3Schema (so custom resources are pruned, defaulted and validated
// as kube-apiserver does), and adds each version's schema (JSON) to
// schemas for /openapi/v3.
func loadCRDs(api *fakeapi.Server, path string, schemas map[schema.GroupVersionKind]json.RawMessage) error {
	docs, err := readDocs(path)
	if err != nil {
		return fmt.Errorf("serve: CRD file: %w", err)
	}
	for i, u := range docs {
		where := fmt.Sprintf("serve: CRD file %s, object %d (%s)", path, i+1, u.GetName())
		infos, err := fakeapi.CRDResources(u.Object)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for _, info := range infos {
			if err := api.RegisterCRD(info); err != nil {
				return fmt.Errorf("%s: version %s: %w", where, info.GVR.Version, err)
			}
			if info.OpenAPIV3Schema != nil {
				data, err := json.Marshal(info.OpenAPIV3Schema)
				if err != nil {
					return fmt.Errorf("%s: version %s: schema.openAPIV3Schema: %w", where, info.GVR.Version, err)
				}
				schemas[info.GVR.GroupVersion().WithKind(info.Kind)] = data
			}
		}
	}
	return nil
}

// seed creates the objects of a file, namespaces first.
func seed(ctx context.Context, api *fakeapi.Server, path string) error {
	docs, err := readDocs(path)
	if err != nil {
		return fmt.Errorf("serve: seed file: %w", err)
	}
	sort.SliceStable(docs, func(i, j int) bool {
		return docs[i].GetKind() == "Namespace" && docs[j].GetKind() != "Namespace"
	})
	c := api.Client("seed")
	for i, u := range docs {
		gvk := u.GroupVersionKind()
		var info *fakeapi.ResourceInfo
		for _, r := range api.Resources() {
			if r.GVR.GroupVersion() == gvk.GroupVersion() && r.Kind == gvk.Kind {
				info = &r
				break
			}
		}
		if info == nil {
			return fmt.Errorf("serve: seed file %s, object %d: no served resource has kind %s; load its CRD with --crd", path, i+1, gvk)
		}
		ns := ""
		if info.Namespaced {
			ns = u.GetNamespace()
			if ns == "" {
				ns = "default"
				u.SetNamespace(ns)
			}
		}
		if _, err := c.Create(ctx, info.GVR, ns, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("serve: seed file %s, object %d (%s %s/%s): %w", path, i+1, gvk.Kind, ns, u.GetName(), err)
		}
	}
	return nil
}

// encodeObject writes obj as JSON with its apiVersion and kind.
func encodeObject(obj runtime.Object, w io.Writer) error {
	if obj.GetObjectKind().GroupVersionKind().Empty() {
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
	}
	return unstructured.UnstructuredJSONScheme.Encode(obj, w)
}
