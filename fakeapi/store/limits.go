package store

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// LimitRanges (v1) and RuntimeClasses (node.k8s.io/v1): kinds every
// kube-apiserver serves that operators index and watch even when no object
// exists (Kueue's core controllers index LimitRanges and watch
// RuntimeClasses; its manager does not start without them). Served with
// their scope and name rules; no object-specific validation.
func init() {
	builtins = append(builtins,
		builtin{gvk: corev1.SchemeGroupVersion.WithKind("LimitRange"), namespaced: true, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain,
		}},
		builtin{gvk: nodev1.SchemeGroupVersion.WithKind("RuntimeClass"), namespaced: false, rules: kindRules{
			nameFn: apivalidation.NameIsDNSSubdomain,
		}},
	)
}
