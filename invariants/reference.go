package invariants

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cachelab/cachelab/sim"
)

// NameMatchesReference is the differential oracle's verdict: the faulted
// run settles to the end state of the same plan run without faults (the
// reference run). It judges two traces, so it is not among All: see
// MatchesReference.
const NameMatchesReference = "matches-reference"

// ReferenceContract says what matches-reference checks, in the words of
// the other invariants' contracts (for `cachelab explain` and the docs).
const ReferenceContract = `A controller's end state is a function of what its users asked, not of
the faults on the way (Sieve, OSDI'22; Acto, SOSP'23: "the system should
converge to the same state as in the fault-free run"). The lab runs the
plan's user actions a second time with no fault (no fault step, no crash or
restart, no random fault; the same seeded latencies and request costs) and
compares the end states: the primaries (the objects of the resources the
user creates, or the resources named) and every object owned by one,
transitively, through ownerReferences. It normalizes what legitimately
differs between two runs: UIDs (a UID anywhere reads as the identity of its
object), resourceVersions, generation (and a DaemonSet Pod's
pod-template-generation label, its owner's generation at its creation),
timestamps (every RFC 3339 string),
what the server allocates for a Service (cluster IPs, node ports),
managedFields, generated names (generateName + a rank), the order of every
list, and status.observedGeneration (compared as current or stale against
its object's generation; a condition current in the faulted run and stale
in the reference, alike otherwise, was written after the user's last spec
change there and before it in the reference: read as the reference's). What records the path a run took is not end
state: a revision number (a "revision" field, a "<prefix>/revision"
annotation) is compared as the latest of its family (a primary and what it
owns) or an earlier one, "<prefix>/revision-history" is left out, an object
kept at an earlier revision that runs nothing (spec.replicas 0, or no spec:
what a controller keeps for a rollback) is left out when the other run does
not have it live, and a condition False in one run, True in an earlier
version of that object and absent in the other run, is left out (it records
a transition the other run did not take); each is named in the verdict.
status.collisionCount (the hash collisions met on the path) is left out:
its effect, the name of the newest revision, is compared through that
object.
The fault-free plan runs twice: every path whose
value differs between the two fault-free runs (a token the controller draws
from crypto/rand, a name with a random suffix) is left out of the
comparison and named in the verdict, so that the controller's own
nondeterminism is never blamed on a fault. When a faulted run differs from
them, the plan runs up to 2 more times without faults (once per plan),
and what any of these runs differs on from the first is left out too: two
runs agree by chance on a value drawn from a Go map's order.
Some controllers' end states depend, with no fault, on which of the user's
states they saw (a StatefulSet Pod below its partition keeps the template
it was created from; the scale an HPA set stays when the HPA is deleted):
the plan then allows several end states. When the end states differ and
the subject's desired state holds at the run's end, the plan runs again
without faults under other timing of the same user actions: with the
controller started only after the user's last action (one deployed late),
with the controller given time to settle on each of the user's states
before the next (users who act slowly), and with each group of the user's
steps played as long after the controller had made what it had made before
it in the faulted run (the faulted run's own timing, found in at most 6
fault-free runs; that run must also fail no invariant). A run whose end
state equals one of theirs passes (its desired state reached there too,
the same user actions done), and the verdict names which run matched and
what the reference holds otherwise. A run unlike all of them, or of a
subject with no desired state, fails.`

// ReferenceOptions adapt the end-state comparison to a controller.
type ReferenceOptions struct {
	// Primaries are the resources of the controller's primary objects
	// ("configmaps", "foos" or "foos.example.com"). Optional; default: the
	// resources of the objects the plan's user creates (its initial objects
	// and the user's create steps), in either run.
	Primaries []string
	// Ignore are dotted field paths left out of every compared object
	// ("status.lastSyncTime", "metadata.annotations.example.com/seen"), for
	// what the controller legitimately writes differently from run to run
	// (a counter of its reconciles, a resourceVersion it remembers). A path
	// segment may contain dots only as its last one (annotation keys).
	Ignore []string
}

// EndState is the normalized end state of one run: every object on the
// server when it ended, with what two runs may legitimately disagree on
// taken out (see contractReference). It is small and plain, so that a
// reference run's end state can be kept and compared with many faulted runs.
type EndState struct {
	// Outcome is the run's outcome ("quiet" for a run that settled).
	Outcome string
	// Objects are the objects on the server at the end, by ID.
	Objects []EndObject
	// Created are the resources (normalized: "foos", not
	// "foos.example.com") the user or the plan's setup created objects of.
	Created []string
	// Missing names the objects whose content the trace does not hold (no
	// write record at their final resourceVersion).
	Missing []string
	// Final is the position of the trace's final record.
	Final int
	// Nondeterministic are the paths whose value differed between two
	// fault-free runs of the same plan, by object ID (an empty path: the
	// object itself, in one run only), set by LeaveOutNondeterminism: the
	// comparison leaves them out, and says so.
	Nondeterministic map[string][][]string `json:",omitempty"`
}

// LeaveOutNondeterminism returns ref (a fault-free run's end state) with
// Nondeterministic set to every path whose value differs in again (more
// fault-free runs of the same plan), added to those ref already leaves
// out: what the controller draws at random (a token from crypto/rand, a
// name with a random suffix, the first key met ranging over a Go map)
// differs with no fault at all, and is not the faults' doing. A path
// inside a list stops at the list. An object only one of the runs has is
// left out whole. ref itself is not changed.
func LeaveOutNondeterminism(ref *EndState, again ...*EndState) *EndState {
	out := *ref
	out.Nondeterministic = map[string][][]string{}
	seen := map[string]bool{}
	add := func(id string, p []string) {
		k := id + "\x00" + strings.Join(p, "\x00")
		if p == nil {
			k = id
		}
		if !seen[k] {
			seen[k] = true
			out.Nondeterministic[id] = append(out.Nondeterministic[id], p)
		}
	}
	ids := make([]string, 0, len(ref.Nondeterministic))
	for id := range ref.Nondeterministic {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		for _, p := range ref.Nondeterministic[id] {
			add(id, p)
		}
	}
	a := map[string]EndObject{}
	for _, o := range ref.Objects {
		a[o.ID] = o
	}
	for _, other := range again {
		b := map[string]EndObject{}
		for _, o := range other.Objects {
			b[o.ID] = o
		}
		for _, o := range ref.Objects {
			p, ok := b[o.ID]
			if !ok {
				add(o.ID, nil)
				continue
			}
			var paths [][]string
			diffPaths(o.Content, p.Content, nil, &paths)
			sort.Slice(paths, func(i, j int) bool { return strings.Join(paths[i], ".") < strings.Join(paths[j], ".") })
			for _, path := range paths {
				add(o.ID, path)
			}
		}
		for _, o := range other.Objects {
			if _, ok := a[o.ID]; !ok {
				add(o.ID, nil)
			}
		}
	}
	if len(out.Nondeterministic) == 0 {
		out.Nondeterministic = nil
	}
	return &out
}

// diffPaths appends to out the paths under prefix where a and b differ.
func diffPaths(a, b any, prefix []string, out *[][]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if canonical(a) != canonical(b) {
			*out = append(*out, slices.Clone(prefix))
		}
		return
	}
	for k, av := range am {
		path := append(slices.Clone(prefix), k)
		if bv, ok := bm[k]; ok {
			diffPaths(av, bv, path, out)
		} else {
			*out = append(*out, path)
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			*out = append(*out, append(slices.Clone(prefix), k))
		}
	}
}

// leftOut takes out of objs (the objects compared, by ID) what nd leaves
// out, copying an object it changes, and adds to names the "<id> <path>"
// of what it left out.
func leftOut(objs map[string]EndObject, nd map[string][][]string, names map[string]bool) {
	for id, paths := range nd {
		o, ok := objs[id]
		if !ok {
			continue
		}
		for _, p := range paths {
			if len(p) == 0 {
				names[id] = true
			} else {
				names[id+" "+strings.Join(p, ".")] = true
			}
		}
		whole := false
		for _, p := range paths {
			whole = whole || len(p) == 0
		}
		if whole {
			delete(objs, id)
			continue
		}
		o.Content = deepCopyJSON(o.Content).(map[string]any)
		for _, p := range paths {
			deleteExact(o.Content, p)
		}
		objs[id] = o
	}
}

// deleteExact removes the field at path, each segment one key.
func deleteExact(obj map[string]any, path []string) {
	for i, seg := range path {
		if i == len(path)-1 {
			delete(obj, seg)
			return
		}
		next, ok := obj[seg].(map[string]any)
		if !ok {
			return
		}
		obj = next
	}
}

// EndObject is one object of an EndState.
type EndObject struct {
	// ID names the object across runs: "configmaps/default/a"; a
	// generated name reads generateName + "*" and its rank among the
	// objects of that prefix ordered by content ("pods/default/web-*1").
	ID string
	// Resource is the object's normalized resource ("foos").
	Resource string
	// UID is the object's UID in its run.
	UID string
	// Owners are the UIDs of its ownerReferences.
	Owners []string
	// Content is the normalized object.
	Content map[string]any
	// Pos is the position of the write that left the object so.
	Pos int
	// WasTrue are the condition types an earlier version of the object
	// (same UID) had with status True: a False one of these records a
	// transition (see leaveOutTransitions).
	WasTrue []string `json:",omitempty"`
}

// EndStateOf reads tr's end state (its final record, and the write records
// holding each final object's content) and normalizes it with opts.Ignore.
func EndStateOf(tr *sim.Trace, opts ReferenceOptions) (*EndState, error) {
	if tr == nil || len(tr.Records) == 0 {
		return nil, fmt.Errorf("the trace is empty")
	}
	final, ok := finalRecord(tr)
	if !ok {
		return nil, fmt.Errorf("the trace has no final record (the server's state at the end)")
	}
	es := &EndState{Outcome: tr.Outcome, Final: final.Pos}
	// The content of every object version, by resourceVersion, and the
	// identity of every UID the run wrote.
	byRV := map[int64]int{}
	created := map[string]bool{}
	everKey := map[string]key{}
	versions := map[string][]int{} // UID -> its write records
	for i, r := range tr.Records {
		if r.Kind != sim.RecWrite || r.Name == "" {
			continue
		}
		byRV[r.RV] = i
		if r.UID != "" {
			versions[r.UID] = append(versions[r.UID], i)
		}
		if r.UID != "" {
			everKey[r.UID] = recKey(r)
		}
		if r.Verb == "create" && (r.Actor == actorUser || r.Actor == sim.ClientSetup) {
			created[normResource(r.Resource)] = true
		}
	}
	for res := range created {
		es.Created = append(es.Created, res)
	}
	sort.Strings(es.Created)

	type raw struct {
		st      sim.ObjectState
		obj     map[string]any
		pos     int
		genName string // generateName, when the name was generated
	}
	var objs []raw
	for _, st := range final.Objects {
		if isEventsResource(st.Resource) {
			continue
		}
		i, ok := byRV[st.RV]
		if !ok || tr.Records[i].Name != st.Name {
			es.Missing = append(es.Missing, stateKey(st).String())
			continue
		}
		var obj map[string]any
		if err := json.Unmarshal(tr.Records[i].Object, &obj); err != nil || obj == nil {
			es.Missing = append(es.Missing, stateKey(st).String())
			continue
		}
		r := raw{st: st, obj: obj, pos: i}
		if md, _ := obj["metadata"].(map[string]any); md != nil {
			if g, _ := md["generateName"].(string); g != "" && strings.HasPrefix(st.Name, g) && len(st.Name) > len(g) {
				r.genName = g
			}
		}
		objs = append(objs, r)
	}

	// First pass: a provisional name for every object (generated names
	// read generateName + "*"), so that references to them normalize.
	names := map[string]string{} // generated name -> provisional
	provisional := func(r raw) string {
		k := stateKey(r.st)
		if r.genName != "" {
			k.Name = r.genName + "*"
		}
		return k.String()
	}
	uidID := map[string]string{}
	for _, r := range objs {
		if r.genName != "" {
			names[r.st.Name] = r.genName + "*"
		}
		uidID[r.st.UID] = provisional(r)
	}
	for uid, k := range everKey {
		if _, live := uidID[uid]; !live {
			uidID[uid] = "deleted " + k.String()
		}
	}
	n := newNormalizer(uidID, names, opts.Ignore)
	type done struct {
		raw
		id      string
		content map[string]any
		json    string
	}
	var out []done
	for _, r := range objs {
		c := n.object(r.obj)
		b, _ := json.Marshal(c)
		out = append(out, done{raw: r, id: provisional(r), content: c, json: string(b)})
	}
	// Rank generated names by content, so that two runs name alike what
	// they hold alike.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].id != out[j].id {
			return out[i].id < out[j].id
		}
		return out[i].json < out[j].json
	})
	rank := map[string]int{}
	for _, d := range out {
		id := d.id
		if d.genName != "" {
			rank[id]++
			id = fmt.Sprintf("%s%d", id, rank[id])
		}
		o := EndObject{ID: id, Resource: normResource(d.st.Resource), UID: d.st.UID, Content: d.content, Pos: d.pos}
		if len(conditionsOf(d.obj)) > 0 {
			o.WasTrue = trueConditions(tr, versions[d.st.UID])
		}
		if md, _ := d.obj["metadata"].(map[string]any); md != nil {
			refs, _ := md["ownerReferences"].([]any)
			for _, ref := range refs {
				if m, _ := ref.(map[string]any); m != nil {
					if uid, _ := m["uid"].(string); uid != "" {
						o.Owners = append(o.Owners, uid)
					}
				}
			}
		}
		es.Objects = append(es.Objects, o)
	}
	return es, nil
}

// actorUser is the client name of the plan's user steps.
const actorUser = "user"

// normalizer rewrites an object's JSON for the comparison.
type normalizer struct {
	uids   *strings.Replacer
	names  map[string]string
	ignore [][]string
}

func newNormalizer(uidID, names map[string]string, ignore []string) *normalizer {
	var pairs []string
	uids := make([]string, 0, len(uidID))
	for u := range uidID {
		uids = append(uids, u)
	}
	sort.Strings(uids) // strings.NewReplacer prefers earlier pairs: a fixed order
	for _, u := range uids {
		pairs = append(pairs, u, "<uid of "+uidID[u]+">")
	}
	n := &normalizer{uids: strings.NewReplacer(pairs...), names: names}
	for _, p := range ignore {
		n.ignore = append(n.ignore, splitPath(p))
	}
	return n
}

// splitPath splits "metadata.annotations.example.com/x" at its first dots:
// as many segments as the object has maps to descend, the rest one key.
func splitPath(p string) []string { return strings.Split(p, ".") }

// object returns the normalized copy of obj.
func (n *normalizer) object(obj map[string]any) map[string]any {
	obj = deepCopyJSON(obj).(map[string]any)
	for _, path := range n.ignore {
		deletePath(obj, path)
	}
	// observedGeneration reads against metadata.generation, before the
	// generation is taken out.
	gen := generationOf(obj)
	if st, _ := obj["status"].(map[string]any); st != nil {
		observedGenerations(st, gen)
		// The hash collisions met on the path (apps/v1): its effect, the
		// newest revision's name, is compared through that object.
		delete(st, "collisionCount")
	}
	allocatedByTheServer(obj)
	if md, _ := obj["metadata"].(map[string]any); md != nil {
		for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"} {
			delete(md, f)
		}
		if l, _ := md["labels"].(map[string]any); l != nil {
			// A DaemonSet Pod's owner generation at its creation
			// (extensions/v1beta1 DaemonSetTemplateGenerationKey): a
			// generation, as above; its template is compared through
			// the controller-revision-hash label and the spec.
			delete(l, "pod-template-generation")
			if len(l) == 0 {
				delete(md, "labels")
			}
		}
		if _, ok := md["deletionTimestamp"]; ok {
			md["deletionTimestamp"] = "<set>"
		}
		if name, _ := md["name"].(string); n.names[name] != "" {
			md["name"] = n.names[name]
		}
	}
	return n.walk(obj).(map[string]any)
}

// allocatedByTheServer replaces what kube-apiserver's allocators pick for
// a core/v1 Service (spec.clusterIP and clusterIPs unless "None", every
// spec.ports[].nodePort, spec.healthCheckNodePort) by "<allocated>": the
// real server picks them at random, and the fake from its range in the
// order of the creates, so two runs that create the same Services in
// another order hold them swapped.
func allocatedByTheServer(obj map[string]any) {
	if obj["kind"] != "Service" || obj["apiVersion"] != "v1" {
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if ip, ok := spec["clusterIP"].(string); ok && ip != "" && ip != "None" {
		spec["clusterIP"] = "<allocated>"
		if ips, ok := spec["clusterIPs"].([]any); ok {
			for i := range ips {
				ips[i] = "<allocated>"
			}
		}
	}
	if _, ok := spec["healthCheckNodePort"]; ok {
		spec["healthCheckNodePort"] = "<allocated>"
	}
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		if pm, ok := p.(map[string]any); ok {
			if _, ok := pm["nodePort"]; ok {
				pm["nodePort"] = "<allocated>"
			}
		}
	}
}

// generationOf returns metadata.generation, -1 if absent.
func generationOf(obj map[string]any) float64 {
	md, _ := obj["metadata"].(map[string]any)
	if g, ok := md["generation"].(float64); ok {
		return g
	}
	return -1
}

// observedGenerations replaces every observedGeneration under status by
// "<current>" or "<stale>" against the object's generation: a child whose
// spec was written more often in one run has another generation, not
// another state.
func observedGenerations(v any, gen float64) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "observedGeneration" {
				if g, ok := e.(float64); ok && gen >= 0 {
					if g == gen {
						x[k] = "<current>"
					} else {
						x[k] = "<stale>"
					}
				}
				continue
			}
			observedGenerations(e, gen)
		}
	case []any:
		for _, e := range x {
			observedGenerations(e, gen)
		}
	}
}

// walk normalizes strings (UIDs, generated names, timestamps) and sorts
// every list.
func (n *normalizer) walk(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = n.walk(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.walk(e)
		}
		sort.SliceStable(x, func(i, j int) bool { return canonical(x[i]) < canonical(x[j]) })
		return x
	case string:
		if isTimestamp(x) {
			return "<time>"
		}
		if g, ok := serverGenerated(x); ok {
			return g
		}
		if p, ok := n.names[x]; ok {
			return p
		}
		return n.uids.Replace(x)
	}
	return v
}

// serverGenerated recognizes the names the API server makes up with a
// random suffix for objects it completes (not generateName, handled
// apart): the ServiceAccount admission's projected token volume,
// "kube-api-access-" + 5 random characters, in every Pod.
func serverGenerated(s string) (string, bool) {
	const prefix = "kube-api-access-"
	if len(s) == len(prefix)+5 && strings.HasPrefix(s, prefix) {
		return prefix + "<generated>", true
	}
	return "", false
}

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// isTimestamp reports whether s is an RFC 3339 time (metav1.Time and
// MicroTime write so).
func isTimestamp(s string) bool {
	if len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyJSON(e)
		}
		return out
	}
	return v
}

// deletePath removes the field at path; a key with dots (an annotation)
// matches the rest of the path joined.
func deletePath(obj map[string]any, path []string) {
	cur := obj
	for i, seg := range path {
		rest := strings.Join(path[i:], ".")
		if _, ok := cur[rest]; ok {
			delete(cur, rest)
			return
		}
		if i == len(path)-1 {
			delete(cur, seg)
			return
		}
		next, ok := cur[seg].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
}

// compared returns the objects of es the comparison judges, by ID: those
// of a primary resource and those owned by one, transitively.
func (es *EndState) compared(primaries map[string]bool) map[string]EndObject {
	byUID := map[string]EndObject{}
	for _, o := range es.Objects {
		byUID[o.UID] = o
	}
	in := map[string]bool{}
	var judged func(o EndObject, depth int) bool
	judged = func(o EndObject, depth int) bool {
		if v, ok := in[o.UID]; ok {
			return v
		}
		if primaries[o.Resource] {
			in[o.UID] = true
			return true
		}
		if depth > len(es.Objects) {
			return false
		}
		in[o.UID] = false // an ownership cycle is no ownership
		for _, u := range o.Owners {
			if owner, ok := byUID[u]; ok && judged(owner, depth+1) {
				in[o.UID] = true
				return true
			}
		}
		return false
	}
	out := map[string]EndObject{}
	for _, o := range es.Objects {
		if judged(o, 0) {
			out[o.ID] = o
		}
	}
	return out
}

// MatchesReference judges the end state of tr (a faulted run) against ref,
// the end state of the same plan's reference run (EndStateOf of its
// trace). It fails, with a diff (- reference, + this run), when an object
// judged (see ReferenceOptions.Primaries) differs, is missing or is extra;
// it is Unknown when either run did not settle (outcome other than
// "quiet") or the trace lacks an object's content.
func MatchesReference(tr *sim.Trace, ref *EndState, opts ReferenceOptions) Verdict {
	v := func(s Status, reason string) Verdict {
		return Verdict{Invariant: NameMatchesReference, Status: s, Reason: reason}
	}
	if ref == nil {
		return v(Unknown, "no reference run to compare with")
	}
	if ref.Outcome != "quiet" {
		return v(Unknown, fmt.Sprintf("the fault-free reference run did not settle (outcome %q): it has no end state to compare with", firstLine(ref.Outcome)))
	}
	got, err := EndStateOf(tr, opts)
	if err != nil {
		return v(Unknown, err.Error())
	}
	if got.Outcome != "quiet" {
		return v(Unknown, fmt.Sprintf("the run did not settle (outcome %q): its end state is not one", firstLine(got.Outcome)))
	}
	if len(got.Missing) > 0 || len(ref.Missing) > 0 {
		return v(Unknown, fmt.Sprintf("the traces lack the content of %s", strings.Join(append(got.Missing, ref.Missing...), ", ")))
	}
	return CompareEndStates(got, ref, opts)
}

// leftOutNote is "; left out: <why>: <names, sorted>", or "" for none.
func leftOutNote(why string, set map[string]bool) string {
	if len(set) == 0 {
		return ""
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return "; left out: " + why + ": " + strings.Join(names, ", ")
}

// trueConditions returns the condition types with status True in any of
// the write records at positions.
func trueConditions(tr *sim.Trace, positions []int) []string {
	seen := map[string]bool{}
	for _, i := range positions {
		var obj map[string]any
		if json.Unmarshal(tr.Records[i].Object, &obj) != nil {
			continue
		}
		for typ, c := range conditionsOf(obj) {
			if c["status"] == "True" {
				seen[typ] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// CompareEndStates compares two settled end states: got (the faulted run,
// whose positions the verdict cites) with want (the reference).
func CompareEndStates(got, want *EndState, opts ReferenceOptions) Verdict {
	primaries := map[string]bool{}
	for _, r := range opts.Primaries {
		primaries[normResource(r)] = true
	}
	if len(primaries) == 0 {
		for _, r := range append(append([]string(nil), got.Created...), want.Created...) {
			primaries[r] = true
		}
	}
	g, w := got.compared(primaries), want.compared(primaries)
	skipped := map[string]bool{}
	leftOut(g, want.Nondeterministic, skipped)
	leftOut(w, want.Nondeterministic, skipped)
	kept, transitions := map[string]bool{}, map[string]bool{}
	leaveOutKeptRevisions(g, w, kept)
	leaveOutTransitions(g, w, transitions)
	later := map[string]bool{}
	leaveOutLaterConfirmations(g, w, later)
	note := leftOutNote("differs between two fault-free runs", skipped) +
		leftOutNote("an earlier revision kept for a rollback", kept) +
		leftOutNote("a condition recording a transition the other run did not take", transitions) +
		leftOutNote("a condition this run wrote after the user's last spec change, the reference before it, alike otherwise", later)
	ids := map[string]bool{}
	for id := range g {
		ids[id] = true
	}
	for id := range w {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	var diffs []string
	var positions []int
	var differ []string
	for _, id := range sorted {
		gobj, inG := g[id]
		wo, inW := w[id]
		switch {
		case !inG:
			differ = append(differ, id+" (missing)")
			diffs = append(diffs, fmt.Sprintf("%s: in the reference, not in this run:\n%s", id, indent(prettyJSON(wo.Content))))
		case !inW:
			differ = append(differ, id+" (extra)")
			positions = append(positions, gobj.Pos)
			diffs = append(diffs, fmt.Sprintf("%s: in this run, not in the reference (written at #%d):\n%s", id, gobj.Pos, indent(prettyJSON(gobj.Content))))
		default:
			if d := cmp.Diff(wo.Content, gobj.Content); d != "" {
				differ = append(differ, id)
				positions = append(positions, gobj.Pos)
				diffs = append(diffs, fmt.Sprintf("%s: differs (- reference, + this run; last written at #%d):\n%s", id, gobj.Pos, d))
			}
		}
	}
	judged := make([]string, 0, len(primaries))
	for r := range primaries {
		judged = append(judged, r)
	}
	sort.Strings(judged)
	if len(differ) == 0 {
		return Verdict{Invariant: NameMatchesReference, Status: Pass,
			Reason: fmt.Sprintf("the end state equals the fault-free reference run's: %d objects (primaries: %s, and what they own)%s", len(g), strings.Join(judged, ", "), note)}
	}
	positions = append(positions, got.Final)
	vd := Verdict{Invariant: NameMatchesReference, Status: Fail, Positions: positions,
		Reason: fmt.Sprintf("the end state differs from the fault-free reference run's (same user actions, no fault) in %d of %d objects: %s%s",
			len(differ), len(ids), strings.Join(differ, ", "), note),
		Detail: "primaries: " + strings.Join(judged, ", ") + " (and every object they own)\n\n" + strings.Join(diffs, "\n")}
	at := positions[0]
	vd.At = &at
	return vd
}

func prettyJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
