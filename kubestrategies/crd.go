package kubestrategies

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cachelab/cachelab/fakeapi/store"
)

// CRDValidation is apiextensions-apiserver's own validation of
// CustomResourceDefinitions (the CRD strategy's Validate and
// ValidateUpdate: ValidateCustomResourceDefinition and
// ValidateCustomResourceDefinitionUpdate, on the internal version), which
// Register gives the fake's store in place of its hand-written subset:
// printer columns, conversion, selectable fields, list-type and
// validation-rule checks of the schemas, and the rest.
type CRDValidation struct{}

var _ store.CRDValidation = CRDValidation{}

// ValidateCRD implements store.CRDValidation.
func (CRDValidation) ValidateCRD(crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	in, err := internalCRD(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	ctx := context.Background()
	if old == nil {
		return validation.ValidateCustomResourceDefinition(ctx, in)
	}
	was, err := internalCRD(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateCustomResourceDefinitionUpdate(ctx, in, was)
}

// internalCRD converts a v1 CRD to a new internal one.
func internalCRD(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd.DeepCopy(), out, nil); err != nil {
		return nil, fmt.Errorf("converting CRD %s to the internal version: %w", crd.Name, err)
	}
	return out, nil
}
