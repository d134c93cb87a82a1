// Package config embeds the Bellerophon CRD manifest (crd.yaml), so tests and
// tools can read the schema the operator's Validate function mirrors.
package config

import _ "embed"

// CRDManifest is crd.yaml: the apiextensions.k8s.io/v1
// CustomResourceDefinition of bellerophons.lab.cachelab.dev.
//
//go:embed crd.yaml
var CRDManifest []byte
