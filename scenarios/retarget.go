package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/sim"
)

// Needs is what a scenario needs of the cluster and the controller beyond
// the lab's fake API server: the kinds of the objects it creates, the
// resources its steps name and the subject parameters it sets (knobs of a
// built-in subject).
type Needs struct {
	// Kinds are the kinds of its objects ("Bellerophon
	// (lab.cachelab.dev/v1alpha1)", "ConfigMap (v1)"), sorted.
	Kinds []string
	// Resources are the resources its steps and competitor name, sorted.
	Resources []string
	// Params are its subject parameters ("handlerDelay=200ms"), sorted.
	Params []string
	// Kubelet is true when it runs the kubelet actor (Pods go Ready).
	Kubelet bool
}

// String reads "kinds Bellerophon (lab.cachelab.dev/v1alpha1); resources
// bellerophons, pods; kubelet".
func (n Needs) String() string {
	var parts []string
	if len(n.Kinds) > 0 {
		parts = append(parts, "kinds "+strings.Join(n.Kinds, ", "))
	}
	if len(n.Resources) > 0 {
		parts = append(parts, "resources "+strings.Join(n.Resources, ", "))
	}
	if len(n.Params) > 0 {
		parts = append(parts, "subject parameters "+strings.Join(n.Params, ", "))
	}
	if n.Kubelet {
		parts = append(parts, "kubelet")
	}
	return strings.Join(parts, "; ")
}

// objectHead is the identity of an object in a plan.
type objectHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func headOf(raw json.RawMessage) (objectHead, bool) {
	var h objectHead
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil || h.Kind == "" {
		return h, false
	}
	return h, true
}

func kindName(apiVersion, kind string) string { return kind + " (" + apiVersion + ")" }

// Needs returns what s needs (see Needs).
func (s *Scenario) Needs() Needs {
	var n Needs
	kinds, res := map[string]bool{}, map[string]bool{}
	add := func(raw json.RawMessage) {
		if h, ok := headOf(raw); ok {
			kinds[kindName(h.APIVersion, h.Kind)] = true
		}
	}
	for _, o := range s.Plan.Objects {
		add(o)
	}
	for _, st := range s.Plan.Steps {
		add(st.Object)
		if st.Resource != "" {
			res[st.Resource] = true
		}
	}
	if c := s.Plan.Competitor; c != nil {
		res[c.Resource] = true
	}
	for k, v := range s.Plan.SubjectParams {
		n.Params = append(n.Params, k+"="+v)
	}
	for k := range kinds {
		n.Kinds = append(n.Kinds, k)
	}
	for r := range res {
		n.Resources = append(n.Resources, r)
	}
	sort.Strings(n.Kinds)
	sort.Strings(n.Resources)
	sort.Strings(n.Params)
	n.Kubelet = s.Plan.Kubelet != nil
	return n
}

// Object returns an object of kind k named name in namespace ns: its first
// example with its identity replaced, or else the object with only its
// schema's required fields (at their defaults or smallest values).
func (k Kind) Object(name, ns string) map[string]any {
	var obj map[string]any
	if len(k.Examples) > 0 {
		obj = deepCopyMap(k.Examples[0])
	} else {
		obj = map[string]any{}
		if m, ok := minimalValue(k.Schema).(map[string]any); ok {
			obj = m
		}
		// A spec with required fields of its own is part of the
		// smallest object a controller would act on.
		if _, ok := obj["spec"]; !ok {
			if props, _ := k.Schema["properties"].(map[string]any); props != nil {
				if spec, _ := props["spec"].(map[string]any); spec != nil && len(stringSet(spec["required"])) > 0 {
					obj["spec"] = minimalValue(spec)
				}
			}
		}
	}
	obj["apiVersion"], obj["kind"] = k.APIVersion, k.Kind
	md := map[string]any{"name": name}
	if k.Namespaced {
		md["namespace"] = ns
	}
	if old, ok := obj["metadata"].(map[string]any); ok {
		for _, f := range []string{"labels", "annotations"} {
			if v, ok := old[f]; ok {
				md[f] = v
			}
		}
	}
	obj["metadata"] = md
	return obj
}

// Retarget returns s's plan for subject, a controller whose primary kind
// is k: the scenario's objects of a kind the controller does not serve
// (served says which it does) become objects of k (same names; see
// Kind.Object), and its steps and faults on their resource act on k's.
// A scenario on served kinds only is returned as PlanFor gives it. skip,
// when not "", says why the scenario cannot be re-aimed (and the plan is
// not to be run): its objects are of several foreign kinds, or a step
// changes a foreign object's spec or status in a way k has no equivalent
// for (a spec change other than a scale with a scale subresource at
// .spec.replicas, a whole-object update, a status write). k may be nil
// (no primary kind known): then a scenario needing a foreign kind is
// skipped.
func (s *Scenario) Retarget(subject string, served func(apiVersion, kind string) bool, k *Kind) (plan sim.Plan, skip string) {
	plan = s.PlanFor(subject)
	foreign := map[string]objectHead{}
	note := func(raw json.RawMessage) {
		if h, ok := headOf(raw); ok && !served(h.APIVersion, h.Kind) {
			foreign[kindName(h.APIVersion, h.Kind)] = h
		}
	}
	for _, o := range plan.Objects {
		note(o)
	}
	for _, st := range plan.Steps {
		note(st.Object)
	}
	if len(foreign) == 0 {
		return plan, ""
	}
	names := make([]string, 0, len(foreign))
	for n := range foreign {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case k == nil:
		return plan, fmt.Sprintf("needs kind %s, which the controller does not serve, and no primary kind is known to re-aim it at", strings.Join(names, ", "))
	case len(foreign) > 1:
		return plan, fmt.Sprintf("needs %d kinds the controller does not serve (%s): only one can be re-aimed at %s", len(foreign), strings.Join(names, ", "), k.Kind)
	}
	from := foreign[names[0]]
	resources := foreignResources(from)
	onForeign := func(res string) bool { return res != "" && slices.Contains(resources, res) }
	object := func(raw json.RawMessage) (json.RawMessage, bool) {
		h, ok := headOf(raw)
		if !ok || h.Kind != from.Kind || h.APIVersion != from.APIVersion {
			return raw, false
		}
		ns := h.Metadata.Namespace
		if ns == "" {
			ns = "default"
		}
		obj := k.Object(h.Metadata.Name, ns)
		b, _ := json.Marshal(obj)
		return b, true
	}
	for i, o := range plan.Objects {
		plan.Objects[i], _ = object(o)
	}
	what := func(i int) string {
		return fmt.Sprintf("step %d (%s %s)", i, plan.Steps[i].Actor, plan.Steps[i].Op)
	}
	for i := range plan.Steps {
		st := &plan.Steps[i]
		switch st.Op {
		case "create":
			st.Object, _ = object(st.Object)
		case "update":
			if _, ok := object(st.Object); ok || onForeign(st.Resource) {
				return plan, fmt.Sprintf("%s replaces a whole %s (its spec), which has no equivalent on %s", what(i), from.Kind, k.Kind)
			}
		case "update-status", "patch-status":
			if _, ok := object(st.Object); ok || onForeign(st.Resource) {
				return plan, fmt.Sprintf("%s writes %s's status, which has no equivalent on %s", what(i), from.Kind, k.Kind)
			}
		case "patch":
			if onForeign(st.Resource) {
				if why := patchFits(st.Patch, *k); why != "" {
					return plan, fmt.Sprintf("%s patches %s's %s", what(i), from.Kind, why)
				}
			}
		}
		if onForeign(st.Resource) {
			st.Resource = k.Resource
		}
		if onForeign(st.Child.Owner) {
			st.Child.Owner = k.Resource
		}
	}
	if c := plan.Competitor; c != nil && onForeign(c.Resource) {
		if why := patchFits(c.Patch, *k); why != "" {
			return plan, fmt.Sprintf("its competitor enforces %s's %s", from.Kind, why)
		}
		cc := *c
		cc.Resource = k.Resource
		plan.Competitor = &cc
	}
	if k.Validate != nil {
		for _, o := range plan.Objects {
			var obj map[string]any
			if json.Unmarshal(o, &obj) == nil && obj["kind"] == k.Kind {
				if err := k.Validate(obj); err != nil {
					return plan, fmt.Sprintf("no valid %s to stand in for %s (give Examples): %v", k.Kind, from.Kind, err)
				}
			}
		}
	}
	return plan, ""
}

// foreignResources names the resources a plan may use for objects of h's
// kind: the plural of a registered subject's CRD of that kind (plain and
// with its group), else the kind in lower case + "s".
func foreignResources(h objectHead) []string {
	for _, info := range sim.Subjects() {
		for _, c := range info.CRDs {
			if c.Kind == h.Kind && c.GVR.GroupVersion().String() == h.APIVersion {
				return []string{c.GVR.Resource, sim.ResourceName(c.GVR)}
			}
		}
	}
	return []string{strings.ToLower(h.Kind) + "s"}
}

// patchFits says why a merge patch of a foreign object does not fit kind
// k ("" if it fits): one that changes only metadata fits any kind; one
// that changes only spec.replicas fits a kind with a scale subresource at
// .spec.replicas.
func patchFits(patch json.RawMessage, k Kind) string {
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return "fields (not a merge patch)"
	}
	var fields []string
	for top, v := range p {
		switch top {
		case "metadata":
			continue
		case "spec":
			if m, ok := v.(map[string]any); ok && len(m) == 1 && m["replicas"] != nil && k.ScaleReplicasPath == ".spec.replicas" {
				continue
			}
			if m, ok := v.(map[string]any); ok {
				for f := range m {
					fields = append(fields, "spec."+f)
				}
				continue
			}
		}
		fields = append(fields, top)
	}
	if len(fields) == 0 {
		return ""
	}
	sort.Strings(fields)
	return strings.Join(fields, ", ") + ", which " + k.Kind + " has no equivalent for"
}
