package sim

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resolveChild returns s with the object its Child picks (see ChildRef)
// as its Resource, Namespace and Name, and notes the choice in the trace.
// It reads the server's state without a request.
func (r *run) resolveChild(s Step) (Step, error) {
	c := s.Child
	ownerGVR, err := r.res.byResource(c.Owner)
	if err != nil {
		return s, fmt.Errorf("child.owner: %w", err)
	}
	var only schema.GroupVersionResource
	if s.Resource != "" {
		if only, err = r.res.byResource(s.Resource); err != nil {
			return s, err
		}
	}
	ns := s.Namespace
	if ns == "" && r.res.namespaced[ownerGVR] {
		ns = metav1.NamespaceDefault
	}
	type child struct {
		gvr      schema.GroupVersionResource
		ns, name string
	}
	var ownerUID string
	var children []child
	objs := r.srv.Objects()
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err == nil && r.res.gvrOf(obj) == ownerGVR && m.GetNamespace() == ns && m.GetName() == c.OwnerName {
			ownerUID = string(m.GetUID())
		}
	}
	owner := fmt.Sprintf("%s %s", ResourceName(ownerGVR), joinKey(ns, c.OwnerName))
	if ownerUID == "" {
		return s, fmt.Errorf("child of %s: the owner does not exist", owner)
	}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			continue
		}
		gvr := r.res.gvrOf(obj)
		if !only.Empty() && gvr != only {
			continue
		}
		for _, ref := range m.GetOwnerReferences() {
			if string(ref.UID) == ownerUID {
				children = append(children, child{gvr, m.GetNamespace(), m.GetName()})
				break
			}
		}
	}
	if len(children) == 0 {
		if s.Resource != "" {
			return s, fmt.Errorf("child of %s: it owns no %s", owner, s.Resource)
		}
		return s, fmt.Errorf("child of %s: it owns no object", owner)
	}
	slices.SortFunc(children, func(a, b child) int {
		for _, d := range [][2]string{{ResourceName(a.gvr), ResourceName(b.gvr)}, {a.ns, b.ns}, {a.name, b.name}} {
			if d[0] != d[1] {
				if d[0] < d[1] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	k := children[c.Index%len(children)]
	s.Resource, s.Namespace, s.Name, s.Child = ResourceName(k.gvr), k.ns, k.name, ChildRef{}
	r.rec.record(Record{Kind: RecNote, Actor: s.Actor, Op: s.Op, Resource: s.Resource, Namespace: s.Namespace, Name: s.Name,
		Detail: fmt.Sprintf("child %d of %s (of %d): %s %s", c.Index, owner, len(children), s.Resource, joinKey(k.ns, k.name))})
	return s, nil
}

func joinKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
