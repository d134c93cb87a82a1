package cachelabtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cachelab/cachelab/fakeapi"
	"github.com/cachelab/cachelab/fakeapi/store"
	"github.com/cachelab/cachelab/sim"
)

// CRDSet is the custom resources a controller needs served (Controller.CRDs):
// read from manifests by CRDs, or given as values by CRDsOf. A set whose
// files could not be read carries the error, which Test and Catch report
// before any plan runs. The zero value serves no custom resource.
type CRDSet struct {
	kinds []crdKind
	err   error
}

// crdKind is one custom resource (one CRD): every served version, and
// what random plans need to know of it.
type crdKind struct {
	// versions are the served versions, the storage version first.
	versions []sim.CRD
	// scaleReplicas is the scale subresource's specReplicasPath
	// (".spec.replicas"), "" when the CRD has none.
	scaleReplicas string
	// source says where the CRD was read ("config/crd/bases/x.yaml"), or
	// "CRDsOf".
	source string
}

// CRDs reads the CustomResourceDefinitions (apiextensions.k8s.io/v1) a
// controller needs, as envtest's CRDDirectoryPaths does: each path is a
// manifest (YAML, possibly several documents, or JSON) or a directory
// whose .yaml, .yml and .json files are read (not its subdirectories),
// such as kubebuilder's config/crd/bases. Documents of other kinds are
// skipped. Each served version is served as kube-apiserver serves it:
// objects validated, defaulted and pruned by its openAPIV3Schema
// (apiextensions-apiserver's code, CEL rules included), its status
// subresource, its scope.
//
// A missing path, a path with no CRD, a CRD of apiextensions.k8s.io/v1beta1,
// a malformed document or a schema that is not structural makes an error
// naming the file and document: Test and Catch fail with it.
func CRDs(paths ...string) CRDSet {
	var set CRDSet
	if len(paths) == 0 {
		set.err = errors.New("cachelabtest: CRDs: no path given (want a CRD manifest or a directory such as config/crd/bases)")
		return set
	}
	for _, p := range paths {
		files, err := manifestFiles(p)
		if err != nil {
			set.err = fmt.Errorf("cachelabtest: CRDs: %w", err)
			return set
		}
		found := 0
		for _, f := range files {
			kinds, err := readCRDFile(f)
			if err != nil {
				set.err = fmt.Errorf("cachelabtest: CRDs: %w", err)
				return set
			}
			found += len(kinds)
			set.kinds = append(set.kinds, kinds...)
		}
		if found == 0 {
			set.err = fmt.Errorf("cachelabtest: CRDs: %s holds no CustomResourceDefinition", p)
			return set
		}
	}
	set.err = set.checkDuplicates()
	return set
}

// CRDsOf serves the custom resources described by crds, one sim.CRD per
// served version (for a CRD with no manifest, or one built in Go).
func CRDsOf(crds ...sim.CRD) CRDSet {
	var set CRDSet
	for _, c := range crds {
		set.kinds = append(set.kinds, crdKind{versions: []sim.CRD{c}, source: "CRDsOf"})
	}
	set.err = set.checkDuplicates()
	return set
}

// Err returns why the set could not be read, nil if it was.
func (s CRDSet) Err() error { return s.err }

// served returns every served version of every CRD, for the sim.
func (s CRDSet) served() []sim.CRD {
	var out []sim.CRD
	for _, k := range s.kinds {
		out = append(out, k.versions...)
	}
	return out
}

// checkDuplicates refuses a resource served twice.
func (s CRDSet) checkDuplicates() error {
	seen := map[schema.GroupVersionResource]string{}
	for _, k := range s.kinds {
		for _, v := range k.versions {
			if v.GVR.Resource == "" || v.Kind == "" {
				return fmt.Errorf("cachelabtest: CRD from %s: GVR.Resource and Kind are required", k.source)
			}
			if prev, dup := seen[v.GVR]; dup {
				return fmt.Errorf("cachelabtest: CRDs: %s is defined twice (%s and %s)", v.GVR, prev, k.source)
			}
			seen[v.GVR] = k.source
		}
	}
	return nil
}

// manifestFiles lists the manifests a path names: itself, or the
// manifests of the directory, sorted.
func manifestFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				out = append(out, filepath.Join(path, e.Name()))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// readCRDFile reads the CRDs of one manifest file.
func readCRDFile(path string) ([]crdKind, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return readCRDManifest(path, data)
}

// readCRDManifest reads the CRDs of a manifest's documents; name labels
// errors.
func readCRDManifest(name string, data []byte) ([]crdKind, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []crdKind
	for doc := 1; ; doc++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		if obj == nil {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		where := fmt.Sprintf("%s: document %d (CRD %s)", name, doc, u.GetName())
		if gv := u.GetAPIVersion(); gv != "apiextensions.k8s.io/v1" {
			return nil, fmt.Errorf("%s: apiVersion %q: want apiextensions.k8s.io/v1 (v1beta1 CRDs are no longer served by Kubernetes; convert it)", where, gv)
		}
		k, err := crdKindOf(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		k.source = name
		out = append(out, k)
	}
}

// crdKindOf converts one CRD (a JSON-compatible map) with
// fakeapi.CRDResources, checks its schemas compile, and reads its scale
// subresource.
func crdKindOf(crd map[string]any) (crdKind, error) {
	infos, err := fakeapi.CRDResources(crd)
	if err != nil {
		return crdKind{}, errors.New(strings.TrimPrefix(err.Error(), "fakeapi: "))
	}
	if len(infos) == 0 {
		return crdKind{}, errors.New("no served version")
	}
	var k crdKind
	storage := ""
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _, _ := unstructured.NestedString(vm, "name")
		if st, _, _ := unstructured.NestedBool(vm, "storage"); st && storage == "" {
			storage = name
		}
		if p, found, _ := unstructured.NestedString(vm, "subresources", "scale", "specReplicasPath"); found && k.scaleReplicas == "" {
			k.scaleReplicas = p
		}
	}
	for _, info := range infos {
		if info.OpenAPIV3Schema != nil {
			if _, err := store.CompileSchema(info.OpenAPIV3Schema); err != nil {
				return crdKind{}, fmt.Errorf("version %s: %s", info.GVR.Version, strings.TrimPrefix(err.Error(), "store: "))
			}
		}
		c := sim.CRD{GVR: info.GVR, Kind: info.Kind, ListKind: info.ListKind, Namespaced: info.Namespaced,
			HasStatus: info.HasStatus, OpenAPIV3Schema: info.OpenAPIV3Schema}
		if info.GVR.Version == storage {
			k.versions = append([]sim.CRD{c}, k.versions...)
		} else {
			k.versions = append(k.versions, c)
		}
	}
	return k, nil
}
