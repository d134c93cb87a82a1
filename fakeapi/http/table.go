package http

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// tableColumns are the columns of every Table: kube-apiserver's default
// table convertor for resources without printer columns.
var tableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

// toTable converts an object or a list to a metav1.Table with Name and Age
// columns; each row carries the object as includeObject says.
func (h *handler) toTable(obj runtime.Object, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{Kind: "Table", APIVersion: metav1.SchemeGroupVersion.String()},
		ColumnDefinitions: tableColumns,
		Rows:              []metav1.TableRow{},
	}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("table of %T: %w", obj, err))
		}
		if lm, err := meta.ListAccessor(obj); err == nil {
			t.ResourceVersion = lm.GetResourceVersion()
			t.Continue = lm.GetContinue()
			t.RemainingItemCount = lm.GetRemainingItemCount()
		}
	} else if m, err := meta.Accessor(obj); err == nil {
		t.ResourceVersion = m.GetResourceVersion()
	}
	now := h.now()
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("table row of %T: %w", item, err))
		}
		age := "<unknown>"
		if ts := m.GetCreationTimestamp(); !ts.IsZero() {
			age = duration.HumanDuration(now.Sub(ts.Time))
		}
		row := metav1.TableRow{Cells: []any{m.GetName(), age}}
		switch include {
		case metav1.IncludeObject:
			setKind(item)
			data, err := runtime.Encode(jsonSerializer, item)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			row.Object.Raw = data
		case metav1.IncludeMetadata:
			setKind(item)
			pom := &metav1.PartialObjectMetadata{
				TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: metav1.SchemeGroupVersion.String()},
			}
			pom.Name = m.GetName()
			pom.Namespace = m.GetNamespace()
			pom.UID = m.GetUID()
			pom.ResourceVersion = m.GetResourceVersion()
			pom.Generation = m.GetGeneration()
			pom.CreationTimestamp = m.GetCreationTimestamp()
			pom.DeletionTimestamp = m.GetDeletionTimestamp()
			pom.Labels = m.GetLabels()
			pom.Annotations = m.GetAnnotations()
			pom.OwnerReferences = m.GetOwnerReferences()
			pom.Finalizers = m.GetFinalizers()
			data, err := runtime.Encode(jsonSerializer, pom)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			row.Object.Raw = data
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
