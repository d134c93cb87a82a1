package fidelity

import "k8s.io/apimachinery/pkg/runtime/schema"

// GadgetCRDManifest is a second CRD of the corpus, made to exercise what
// Bellerophon's schema does not: defaults, enums, patterns, lengths,
// nullable fields, map lists, preserved unknown fields and CEL rules
// (x-kubernetes-validations, a transition rule among them).
var GadgetCRDManifest = []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.fidelity.cachelab.dev
spec:
  group: fidelity.cachelab.dev
  scope: Namespaced
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "self.minSize <= self.size"
              message: "minSize must not exceed size"
            - rule: "!has(oldSelf.mode) || self.mode == oldSelf.mode"
              message: "mode is immutable"
            properties:
              size: {type: integer, minimum: 0, maximum: 100}
              minSize: {type: integer, default: 0}
              mode: {type: string, enum: [fast, safe], default: safe}
              name: {type: string, pattern: "^[a-z]+$", maxLength: 8}
              note: {type: string, nullable: true}
              tags: {type: array, maxItems: 3, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer, default: 80}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              phase: {type: string}
`)

// Gadgets is the resource of GadgetCRDManifest.
var Gadgets = Resource{GVR: schema.GroupVersionResource{Group: "fidelity.cachelab.dev", Version: "v1", Resource: "gadgets"}, Namespaced: true}

// crdManifests are the CRDs the corpus registers on both servers.
var crdManifests = [][]byte{CRDManifest, GadgetCRDManifest}
