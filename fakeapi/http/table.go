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
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: metav1.SchemeGroupVersion.String()},
				ObjectMeta: objectMeta(m),
			}
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

// objectMeta copies an object's metadata (typed or unstructured).
func objectMeta(m metav1.Object) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:                       m.GetName(),
		GenerateName:               m.GetGenerateName(),
		Namespace:                  m.GetNamespace(),
		UID:                        m.GetUID(),
		ResourceVersion:            m.GetResourceVersion(),
		Generation:                 m.GetGeneration(),
		CreationTimestamp:          m.GetCreationTimestamp(),
		DeletionTimestamp:          m.GetDeletionTimestamp(),
		DeletionGracePeriodSeconds: m.GetDeletionGracePeriodSeconds(),
		Labels:                     m.GetLabels(),
		Annotations:                m.GetAnnotations(),
		OwnerReferences:            m.GetOwnerReferences(),
		Finalizers:                 m.GetFinalizers(),
		ManagedFields:              m.GetManagedFields(),
	}
}

// toPartial converts an object to metav1.PartialObjectMetadata, a list to
// metav1.PartialObjectMetadataList, as kube-apiserver does for the
// metadata client. Status objects (errors) are kept.
func toPartial(obj runtime.Object) (runtime.Object, error) {
	if _, ok := obj.(*metav1.Status); ok {
		return obj, nil
	}
	gv := metav1.SchemeGroupVersion.String()
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("metadata of %T: %w", obj, err))
		}
		out := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: gv}, Items: []metav1.PartialObjectMetadata{}}
		if lm, err := meta.ListAccessor(obj); err == nil {
			out.ResourceVersion = lm.GetResourceVersion()
			out.Continue = lm.GetContinue()
			out.RemainingItemCount = lm.GetRemainingItemCount()
		}
		for _, it := range items {
			m, err := meta.Accessor(it)
			if err != nil {
				return nil, apierrors.NewInternalError(fmt.Errorf("metadata of %T: %w", it, err))
			}
			out.Items = append(out.Items, metav1.PartialObjectMetadata{ObjectMeta: objectMeta(m)})
		}
		return out, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("metadata of %T: %w", obj, err))
	}
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: gv}, ObjectMeta: objectMeta(m)}, nil
}
