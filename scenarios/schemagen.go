package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/cachelab/cachelab/sim"
)

// Kind is a primary kind of schema-driven plans (SchemaPlanGen): a kind
// whose objects the user creates, changes and deletes, and whose children
// (whatever the controller creates with an ownerReference to them) the
// plans delete and compete for.
type Kind struct {
	// Resource names the resource in plan steps ("foos.example.com",
	// "configmaps").
	Resource string
	// APIVersion and Kind are the objects' ("example.com/v1", "Foo").
	APIVersion, Kind string
	// Namespaced is true for a namespaced kind (objects go to "default").
	Namespaced bool
	// Schema, optional, is the kind's structural openAPIV3Schema: objects
	// and changes are drawn from it (types, enums, bounds, lengths,
	// patterns, required fields, nested objects, lists, maps). Without it
	// they are drawn from Examples: each leaf varied as its example value.
	Schema map[string]any
	// ScaleReplicasPath, optional, is the scale subresource's
	// specReplicasPath (".spec.replicas"): plans then scale objects.
	ScaleReplicasPath string
	// Examples, optional, are objects to start from (a sample manifest):
	// a created object is an example (its name replaced) with a few drawn
	// changes. Without any, objects are drawn whole from Schema.
	Examples []map[string]any
	// Validate, optional, says whether a drawn object is valid (nil if it
	// is); an invalid one is replaced by an example, or by the object with
	// only its required fields.
	Validate func(obj map[string]any) error
}

// SchemaGenOptions describe the primaries of a schema-driven plan.
type SchemaGenOptions struct {
	// Kinds are the primary kinds; at least one.
	Kinds []Kind
}

// SchemaPlanGen returns a rapid generator of random Plans for subject that
// act on the primary kinds of o, drawn from their schemas as Acto draws
// its inputs: objects named "a" and "b" (of each kind) exist at the start
// or are created, and episodes change one field, change several in a
// burst (values the controller may never observe), scale (with a scale
// subresource), delete, delete and recreate, change then delete, delete a
// child, or let another writer change a child. Children are whatever the
// controller created with an ownerReference to the object, found when the
// step plays (sim.ChildRef). Each episode is wrapped in at most one fault,
// as PlanGen's (held and expired watches of every resource or of a
// primary, a failed or timed-out write of any resource, a crash and
// restart...): faults that name no resource hit the children's, whatever
// their kind.
//
// Every draw is labelled by what it decides ("action", "kind", "name",
// "spec.replicas", "has spec.tier"...), so a shrunk plan reads as a story;
// shrinking goes toward fewer episodes, the first kind, example and enum
// value, the smallest numbers, absent optional fields.
func SchemaPlanGen(subject string, o SchemaGenOptions) *rapid.Generator[sim.Plan] {
	return rapid.Custom(func(t *rapid.T) sim.Plan {
		g := &planGen{t: t, subject: subject, faultResources: []string{""}}
		for _, k := range o.Kinds {
			g.faultResources = append(g.faultResources, k.Resource)
		}
		sg := &schemaGen{planGen: g, kinds: o.Kinds, leaves: map[int][]leaf{}}
		p := sim.Plan{
			Version:  sim.PlanVersion,
			Name:     "rapid",
			Seed:     rapid.Uint64Range(0, 1<<20).Draw(t, "seed"),
			Subject:  subject,
			Deadline: sim.Duration(3 * time.Minute),
			Quiet:    sim.Duration(45 * time.Second),
			// Pods a controller creates become Running and Ready, as
			// on a cluster.
			Kubelet: &sim.Kubelet{ReadyAfter: sim.Duration(time.Second)},
		}
		g.faultPolicy(t, &p.Faults)
		for ki := range o.Kinds {
			for i, name := range genNames {
				if weighted(t, fmt.Sprintf("%s %s at start", o.Kinds[ki].Kind, name), []int{1, genNameWeights[i]}) == 1 {
					p.Objects = append(p.Objects, mustJSON(sg.object(ki, name)))
				}
			}
		}
		episodes := rapid.SliceOfN(rapid.Custom(sg.episode), 0, genMaxEpisodes).Draw(t, "episodes")
		for _, e := range episodes {
			p.Steps = append(p.Steps, e...)
		}
		slices.SortStableFunc(p.Steps, func(a, b sim.Step) int { return int(a.At - b.At) })
		if len(p.Objects) == 0 && !slices.ContainsFunc(p.Steps, func(s sim.Step) bool { return s.Op == "create" || s.Op == "apply" }) {
			// Nothing for the controller to act on: a run that cannot
			// find anything. The first kind's first object exists at
			// the start instead (drawn last, so no other plan changes).
			p.Objects = append(p.Objects, mustJSON(sg.object(0, genNames[0])))
		}
		return p
	})
}

// schemaActions are the user actions of a schema plan's episode, simplest
// first, with their weights.
var schemaActions = []weightedName{
	{"none", 1}, {"create", 2}, {"change-one", 3}, {"change-burst", 2}, {"scale", 2}, {"delete", 2},
	{"recreate", 3}, {"change-delete", 2}, {"delete-child", 3}, {"competitor-child", 2}, {"competitor-label", 1},
}

// schemaGen draws the objects and episodes of one schema plan.
type schemaGen struct {
	*planGen
	kinds []Kind
	// leaves caches kindLeaves per kind.
	leaves map[int][]leaf
}

// episode draws one episode: a fault around an action, as steps.
func (g *schemaGen) episode(t *rapid.T) []sim.Step {
	g.t = t
	at := time.Duration(rapid.IntRange(1, 12).Draw(t, "at-s")) * time.Second
	fault := pick(t, "fault", genFaults)
	action := pick(t, "action", schemaActions)
	ki := 0
	if len(g.kinds) > 1 {
		ki = rapid.IntRange(0, len(g.kinds)-1).Draw(t, "kind")
	}
	name := genNames[weighted(t, "name", genNameWeights)]
	before, after := g.faultSteps(t, fault, at)
	steps := append(before, g.schemaAction(action, ki, name, at)...)
	return append(steps, after...)
}

// schemaAction returns the steps of one user action on kind ki's object
// name at time at.
func (g *schemaGen) schemaAction(action string, ki int, name string, at time.Duration) []sim.Step {
	k := g.kinds[ki]
	ns := ""
	if k.Namespaced {
		ns = "default"
	}
	at0 := sim.Duration(at)
	user := func(op string) sim.Step {
		return sim.Step{At: at0, Actor: "user", Op: op, Resource: k.Resource, Namespace: ns, Name: name}
	}
	patch := func(body map[string]any) sim.Step {
		st := user("patch")
		st.Patch = mustJSON(body)
		return st
	}
	create := func() sim.Step {
		return sim.Step{At: at0, Actor: "user", Op: "create", Resource: k.Resource, Object: mustJSON(g.object(ki, name))}
	}
	child := func(actor, op string) sim.Step {
		return sim.Step{At: at0, Actor: actor, Op: op, Namespace: ns,
			Child: sim.ChildRef{Owner: k.Resource, OwnerName: name, Index: rapid.IntRange(0, 3).Draw(g.t, "child")}}
	}
	label := func() map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": fmt.Sprintf("t%d", rapid.IntRange(0, 3).Draw(g.t, "team"))}}}
	}
	switch action {
	case "create":
		return []sim.Step{create()}
	case "change-one":
		return []sim.Step{patch(g.change(ki))}
	case "change-burst":
		// Several changes, a few milliseconds apart: a controller that
		// reads its cache between them sees some, perhaps only the last
		// (Sieve's unobserved states).
		n := rapid.IntRange(2, 4).Draw(g.t, "burst")
		var out []sim.Step
		for i := range n {
			st := patch(g.change(ki))
			st.At += sim.Duration(time.Duration(i) * g.ms("burst-gap-ms", 0, 50).D())
			out = append(out, st)
		}
		return out
	case "scale":
		if k.ScaleReplicasPath == "" {
			return []sim.Step{patch(g.change(ki))}
		}
		return []sim.Step{patch(g.scale(ki))}
	case "delete":
		return []sim.Step{user("delete")}
	case "recreate":
		// Deleted, its finalizers stripped (kubectl patch ... finalizers:
		// null) and created again under the same name, at one instant.
		return []sim.Step{user("delete"), patch(map[string]any{"metadata": map[string]any{"finalizers": nil}}), create()}
	case "change-delete":
		del := user("delete")
		del.At += g.ms("delete-after-ms", 0, 100)
		return []sim.Step{patch(g.change(ki)), del}
	case "delete-child":
		return []sim.Step{child("user", "delete")}
	case "competitor-child":
		st := child("competitor", "patch")
		st.Patch = mustJSON(label())
		return []sim.Step{st}
	case "competitor-label":
		st := patch(label())
		st.Actor = "competitor"
		return []sim.Step{st}
	}
	return nil
}

// object draws kind ki's object named name: an example with up to two
// drawn changes, or (with no example) an object drawn from the schema. An
// object its Validate refuses is replaced by the example, or the object
// with its required fields only.
func (g *schemaGen) object(ki int, name string) map[string]any {
	k := g.kinds[ki]
	var obj map[string]any
	if len(k.Examples) > 0 {
		ex := 0
		if len(k.Examples) > 1 {
			ex = rapid.IntRange(0, len(k.Examples)-1).Draw(g.t, "example")
		}
		obj = deepCopyMap(k.Examples[ex])
		for range rapid.IntRange(0, 2).Draw(g.t, "example-changes") {
			mergeInto(obj, g.change(ki))
		}
	} else {
		v := drawSchema(g.t, k.Schema, "", 0)
		obj, _ = v.(map[string]any)
		if obj == nil {
			obj = map[string]any{}
		}
	}
	g.identify(obj, k, name)
	if k.Validate != nil && k.Validate(obj) != nil {
		if len(k.Examples) > 0 {
			obj = deepCopyMap(k.Examples[0])
		} else {
			obj, _ = minimalValue(k.Schema).(map[string]any)
			if obj == nil {
				obj = map[string]any{}
			}
		}
		g.identify(obj, k, name)
	}
	return obj
}

// identify sets obj's apiVersion, kind, name and namespace, and drops
// what a sample manifest may carry that a create refuses or another
// object owns (resourceVersion, uid, status).
func (g *schemaGen) identify(obj map[string]any, k Kind, name string) {
	obj["apiVersion"], obj["kind"] = k.APIVersion, k.Kind
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	for _, f := range []string{"resourceVersion", "uid", "generateName", "creationTimestamp", "managedFields", "ownerReferences"} {
		delete(md, f)
	}
	md["name"] = name
	delete(md, "namespace")
	if k.Namespaced {
		md["namespace"] = "default"
	}
	obj["metadata"] = md
	delete(obj, "status")
}

// change draws a merge patch that changes one field of kind ki: a leaf of
// its spec (or of its top-level fields besides metadata and status when
// it has no spec), with a value drawn from the leaf's schema, or varied
// from its example value.
func (g *schemaGen) change(ki int) map[string]any {
	leaves, ok := g.leaves[ki]
	if !ok {
		leaves = kindLeaves(g.kinds[ki])
		g.leaves[ki] = leaves
	}
	if len(leaves) == 0 {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{"cachelab.dev/change": fmt.Sprint(rapid.IntRange(0, 9).Draw(g.t, "annotation"))}}}
	}
	l := leaves[rapid.IntRange(0, len(leaves)-1).Draw(g.t, "field")]
	label := strings.Join(l.path, ".")
	var v any
	if l.schema != nil {
		v = drawSchema(g.t, l.schema, label, len(l.path))
	} else {
		v = varyLike(g.t, l.example, label)
	}
	return nestAt(l.path, v)
}

// scale draws a merge patch that sets kind ki's scale replicas.
func (g *schemaGen) scale(ki int) map[string]any {
	k := g.kinds[ki]
	path := strings.Split(strings.TrimPrefix(k.ScaleReplicasPath, "."), ".")
	hi := 5
	if s := schemaAt(k.Schema, path); s != nil {
		if m, ok := number(s["maximum"]); ok && m < float64(hi) {
			hi = int(m)
		}
	}
	return nestAt(path, rapid.IntRange(0, max(hi, 0)).Draw(g.t, "replicas"))
}

// leaf is a field a change may set: its path, and its schema (or, for a
// kind without one, its example value).
type leaf struct {
	path    []string
	schema  map[string]any
	example any
}

// kindLeaves lists the fields a change may set, in path order: the
// schema's leaves under spec (lists and maps are leaves: a merge patch
// replaces them whole), or the examples'.
func kindLeaves(k Kind) []leaf {
	var out []leaf
	if k.Schema != nil {
		props, _ := k.Schema["properties"].(map[string]any)
		roots := []string{"spec"}
		if _, ok := props["spec"]; !ok {
			roots = sortedKeys(props)
		}
		for _, r := range roots {
			if skipTop(r) {
				continue
			}
			if s, ok := props[r].(map[string]any); ok {
				out = append(out, schemaLeaves([]string{r}, s, 0)...)
			}
		}
		return out
	}
	if len(k.Examples) == 0 {
		return nil
	}
	ex := k.Examples[0]
	roots := []string{"spec"}
	if _, ok := ex["spec"]; !ok {
		roots = sortedKeys(ex)
	}
	for _, r := range roots {
		if skipTop(r) {
			continue
		}
		out = append(out, exampleLeaves([]string{r}, ex[r])...)
	}
	return out
}

// skipTop reports whether a top-level field is not the user's to change.
func skipTop(name string) bool {
	switch name {
	case "apiVersion", "kind", "metadata", "status":
		return true
	}
	return false
}

// schemaLeaves lists the leaves of s at path.
func schemaLeaves(path []string, s map[string]any, depth int) []leaf {
	props, _ := s["properties"].(map[string]any)
	// An object below the root with required fields is a leaf: a change
	// that set one of its fields where it is absent would create it
	// without the others.
	whole := depth > 0 && len(stringSet(s["required"])) > 0
	if schemaType(s) != "object" || len(props) == 0 || depth > 6 || whole {
		if isTrue(s["x-kubernetes-preserve-unknown-fields"]) && len(props) == 0 && s["additionalProperties"] == nil {
			return nil
		}
		return []leaf{{path: slices.Clone(path), schema: s}}
	}
	var out []leaf
	for _, name := range sortedKeys(props) {
		if ps, ok := props[name].(map[string]any); ok {
			out = append(out, schemaLeaves(append(path, name), ps, depth+1)...)
		}
	}
	return out
}

// exampleLeaves lists the leaves of an example value at path, leaving out
// selectors and labels (changing them breaks what a selector matches).
func exampleLeaves(path []string, v any) []leaf {
	last := path[len(path)-1]
	if strings.Contains(strings.ToLower(last), "selector") || last == "labels" || last == "matchLabels" {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []leaf{{path: slices.Clone(path), example: v}}
	}
	var out []leaf
	for _, k := range sortedKeys(m) {
		out = append(out, exampleLeaves(append(path, k), m[k])...)
	}
	return out
}

// drawSchema draws a value of schema s; label names the draw (the field's
// path). Optional fields are drawn present or absent ("has <path>") down
// to the fourth level, only required ones below. It stays small: lists of
// at most 3 items, maps of at most 2 keys.
func drawSchema(t *rapid.T, s map[string]any, label string, depth int) any {
	if s == nil {
		return map[string]any{}
	}
	if d, ok := s["default"]; ok && !rapid.Bool().Draw(t, label+" not default") {
		// The schema's default, as often as a drawn value: shrinks to it.
		return d
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[rapid.IntRange(0, len(enum)-1).Draw(t, label)]
	}
	if isTrue(s["x-kubernetes-int-or-string"]) {
		return rapid.Int64Range(0, 10).Draw(t, label)
	}
	if isTrue(s["x-kubernetes-embedded-resource"]) {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "embedded"}}
	}
	switch schemaType(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		required := stringSet(s["required"])
		for _, name := range sortedKeys(props) {
			ps, _ := props[name].(map[string]any)
			path := joinPath(label, name)
			// Below the fourth level only required fields: objects
			// drawn from a large schema (an embedded PodSpec) stay
			// small, as Acto's do.
			if depth >= 4 && !required[name] {
				continue
			}
			// An object always has its spec (at the root, label "").
			if !required[name] && !(label == "" && name == "spec") && !rapid.Bool().Draw(t, "has "+path) {
				continue
			}
			out[name] = drawSchema(t, ps, path, depth+1)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok && len(props) == 0 {
			n := rapid.IntRange(0, 2).Draw(t, label+" keys")
			for i := range n {
				out[fmt.Sprintf("k%d", i)] = drawSchema(t, ap, joinPath(label, fmt.Sprintf("k%d", i)), depth+1)
			}
		}
		return out
	case "array":
		items, _ := s["items"].(map[string]any)
		lo, hi := 0, 3
		if m, ok := number(s["minItems"]); ok {
			lo = int(m)
		}
		if m, ok := number(s["maxItems"]); ok && int(m) < hi {
			hi = int(m)
		}
		hi = max(hi, lo)
		n := rapid.IntRange(lo, hi).Draw(t, label+" len")
		out := make([]any, 0, n)
		for i := range n {
			out = append(out, drawSchema(t, items, fmt.Sprintf("%s[%d]", label, i), depth+1))
		}
		return dedupList(s, out, lo)
	case "integer":
		lo, hi := intBounds(s)
		return rapid.Int64Range(lo, hi).Draw(t, label)
	case "number":
		lo, hi := intBounds(s)
		return float64(rapid.Int64Range(lo, hi).Draw(t, label))
	case "boolean":
		return rapid.Bool().Draw(t, label)
	case "string":
		return drawString(t, s, label)
	}
	return map[string]any{}
}

// intBounds are the bounds a number is drawn within: the schema's minimum
// and maximum (exclusive ones moved in by 1), else 0..10 about them.
func intBounds(s map[string]any) (lo, hi int64) {
	lo, hi = 0, 10
	minV, hasMin := number(s["minimum"])
	maxV, hasMax := number(s["maximum"])
	if hasMin {
		lo = int64(math.Ceil(minV))
		if isTrue(s["exclusiveMinimum"]) && float64(lo) == minV {
			lo++
		}
		if !hasMax {
			hi = lo + 10
		}
	}
	if hasMax {
		hi = int64(math.Floor(maxV))
		if isTrue(s["exclusiveMaximum"]) && float64(hi) == maxV {
			hi--
		}
		if !hasMin {
			lo = min(0, hi-10)
		}
	}
	if hi-lo > 1000 {
		hi = lo + 1000
	}
	return lo, max(hi, lo)
}

// drawString draws a string of s: a date-time for that format, one
// matching its pattern, else a word named after the field with a number;
// within its lengths.
func drawString(t *rapid.T, s map[string]any, label string) string {
	minLen, maxLen := 0, 63
	if m, ok := number(s["minLength"]); ok {
		minLen = int(m)
	}
	if m, ok := number(s["maxLength"]); ok {
		maxLen = int(m)
	}
	if f, _ := s["format"].(string); f == "date-time" {
		return fmt.Sprintf("2000-01-01T00:00:%02dZ", rapid.IntRange(0, 59).Draw(t, label))
	}
	if p, _ := s["pattern"].(string); p != "" {
		if re, err := regexp.Compile(p); err == nil {
			v := rapid.StringMatching(p).Draw(t, label)
			if len(v) >= minLen && len(v) <= maxLen {
				return v
			}
			// Too long or short for the lengths: the first of a few
			// plain candidates that fits both (no rapid filter, which
			// fails the test when it gives up).
			for _, c := range []string{"a", "a0", "a-0", "x", "0", "abc", "default", "v1"} {
				if re.MatchString(c) && len(c) >= minLen && len(c) <= maxLen {
					return c
				}
			}
			return v
		}
	}
	word := "v"
	if i := strings.LastIndexAny(label, ".]"); i >= 0 && i+1 < len(label) {
		word = strings.ToLower(label[i+1:])
	} else if label != "" {
		word = strings.ToLower(label)
	}
	v := fmt.Sprintf("%s%d", word, rapid.IntRange(0, 3).Draw(t, label))
	if len(v) > maxLen {
		v = v[len(v)-maxLen:]
	}
	for len(v) < minLen {
		v += "x"
	}
	return v
}

// dedupList drops repeated items of a list that must hold no two equal
// items (x-kubernetes-list-type set) or no two with the same keys (map),
// keeping at least lo when it can.
func dedupList(s map[string]any, items []any, lo int) []any {
	lt, _ := s["x-kubernetes-list-type"].(string)
	if lt != "set" && lt != "map" {
		return items
	}
	keys, _ := s["x-kubernetes-list-map-keys"].([]any)
	seen := map[string]bool{}
	var out []any
	for _, it := range items {
		var id any = it
		if lt == "map" {
			m, _ := it.(map[string]any)
			var k []any
			for _, key := range keys {
				k = append(k, m[fmt.Sprint(key)])
			}
			id = k
		}
		b, _ := json.Marshal(id)
		if seen[string(b)] && len(out) >= lo {
			continue
		}
		seen[string(b)] = true
		out = append(out, it)
	}
	return out
}

// minimalValue is the value of s with only its required fields, each at
// its default or smallest value.
func minimalValue(s map[string]any) any {
	if s == nil {
		return map[string]any{}
	}
	if d, ok := s["default"]; ok {
		return d
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch schemaType(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name := range stringSet(s["required"]) {
			ps, _ := props[name].(map[string]any)
			out[name] = minimalValue(ps)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		lo, _ := intBounds(s)
		return lo
	case "boolean":
		return false
	case "string":
		if m, ok := number(s["minLength"]); ok && m > 0 {
			return strings.Repeat("x", int(m))
		}
		return ""
	}
	return map[string]any{}
}

// varyLike draws a value like v (an example's): a number near it, a
// string with a drawn suffix (a number for a numeric string), a bool.
func varyLike(t *rapid.T, v any, label string) any {
	switch x := v.(type) {
	case bool:
		return rapid.Bool().Draw(t, label)
	case float64:
		return float64(rapid.IntRange(0, int(math.Max(x, 0))*2+3).Draw(t, label))
	case int64:
		return rapid.Int64Range(0, max(x, 0)*2+3).Draw(t, label)
	case int:
		return rapid.IntRange(0, max(x, 0)*2+3).Draw(t, label)
	case string:
		if _, err := fmt.Sscan(x, new(int)); err == nil && strings.Trim(x, "0123456789") == "" {
			return fmt.Sprint(rapid.IntRange(0, 9).Draw(t, label))
		}
		return fmt.Sprintf("%s-%d", x, rapid.IntRange(0, 3).Draw(t, label))
	}
	return v
}

// nestAt returns {path[0]: {path[1]: ... v}}.
func nestAt(path []string, v any) map[string]any {
	out := map[string]any{path[len(path)-1]: v}
	for i := len(path) - 2; i >= 0; i-- {
		out = map[string]any{path[i]: out}
	}
	return out
}

// mergeInto applies the JSON merge patch p to obj in place.
func mergeInto(obj, p map[string]any) {
	for k, v := range p {
		pm, isMap := v.(map[string]any)
		if v == nil {
			delete(obj, k)
			continue
		}
		if om, ok := obj[k].(map[string]any); ok && isMap {
			mergeInto(om, pm)
			continue
		}
		if isMap {
			nm := map[string]any{}
			mergeInto(nm, pm)
			obj[k] = nm
			continue
		}
		obj[k] = v
	}
}

// schemaAt returns the schema of the field at path, nil if none.
func schemaAt(s map[string]any, path []string) map[string]any {
	for _, p := range path {
		props, _ := s["properties"].(map[string]any)
		s, _ = props[p].(map[string]any)
		if s == nil {
			return nil
		}
	}
	return s
}

// deepCopyMap copies a JSON-compatible map through JSON.
func deepCopyMap(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		return map[string]any{}
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]any{}
	}
	return out
}

func schemaType(s map[string]any) string {
	t, _ := s["type"].(string)
	if t == "" && s["properties"] != nil {
		return "object"
	}
	return t
}

func isTrue(v any) bool { b, _ := v.(bool); return b }

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

func stringSet(v any) map[string]bool {
	out := map[string]bool{}
	switch x := v.(type) {
	case []any:
		for _, s := range x {
			out[fmt.Sprint(s)] = true
		}
	case []string:
		for _, s := range x {
			out[s] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func joinPath(label, name string) string {
	if label == "" {
		return name
	}
	return label + "." + name
}
