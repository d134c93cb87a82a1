package fidelity

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RawAnswer is what a server said to one step of a case, before
// normalization: the HTTP status code and JSON body of a request, or the
// events a watch delivered.
type RawAnswer struct {
	// Step names the step within its case ("create a", "stale update").
	Step string
	// Code is the HTTP status code; 0 when the step made no request of its
	// own (collecting events of a watch opened earlier).
	Code int
	// Body is the decoded JSON body: an object, a list or a Status.
	Body map[string]any
	// Events are the watch events delivered, in order.
	Events []RawEvent
	// Note is an observation of the case's own (a transport error, "no
	// event before the deadline").
	Note string
	// Managers keeps the object's managedFields (see Object.Managers).
	Managers bool
}

// RawEvent is one watch event as decoded from the stream.
type RawEvent struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type string
	// Object is the event's object (a Status for ERROR).
	Object map[string]any
}

// Answer is one normalized answer: what the fidelity comparison looks at.
type Answer struct {
	// Step names the step within its case.
	Step string `json:"step"`
	// Code is the HTTP status code (0 for event collection).
	Code int `json:"code,omitempty"`
	// Status is "Success" or "Failure" when the body was a metav1.Status.
	Status string `json:"status,omitempty"`
	// Reason is the Status reason of a failure (NotFound, Conflict ...).
	Reason string `json:"reason,omitempty"`
	// BodyCode is the Status body's own "code" field (0 when absent: a
	// successful delete's Status has none on kube-apiserver).
	BodyCode int `json:"bodyCode,omitempty"`
	// Details are the Status details but causes: name, group, kind, the
	// UID as an identity, retryAfterSeconds.
	Details *Details `json:"details,omitempty"`
	// Causes are the Status causes, as field and type.
	Causes []Cause `json:"causes,omitempty"`
	// HasContinue is true when a 410 Status offers a continue token.
	HasContinue bool `json:"hasContinue,omitempty"`
	// Object is the object answered.
	Object *Object `json:"object,omitempty"`
	// List is the list answered.
	List *List `json:"list,omitempty"`
	// Events are the watch events delivered.
	Events []Event `json:"events,omitempty"`
	// Note is the case's own observation.
	Note string `json:"note,omitempty"`
}

// Details are a Status's details, but causes (see Answer.Causes).
type Details struct {
	Name       string `json:"name,omitempty"`
	Group      string `json:"group,omitempty"`
	Kind       string `json:"kind,omitempty"`
	UID        string `json:"uid,omitempty"`
	RetryAfter int64  `json:"retryAfterSeconds,omitempty"`
}

// Cause is one Status cause: the field it names and its type
// (FieldValueInvalid, FieldValueRequired, ...); messages are dropped.
type Cause struct {
	Field string `json:"field,omitempty"`
	Type  string `json:"type,omitempty"`
	// Message is kept for FieldManagerConflict causes only: it names the
	// manager that owns the field.
	Message string `json:"message,omitempty"`
}

// Object is an object reduced to the fields that carry meaning.
type Object struct {
	// Name is metadata.name; a generated name keeps only its prefix,
	// followed by "<generated>".
	Name string `json:"name"`
	// UID is the object's identity within the case: uid#1, uid#2 ...
	UID string `json:"uid,omitempty"`
	// RV is the resourceVersion as its rank among the case's writes.
	RV string `json:"rv,omitempty"`
	// Generation is metadata.generation.
	Generation int64 `json:"generation,omitempty"`
	// Labels and Annotations are metadata's.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// Finalizers is metadata.finalizers.
	Finalizers []string `json:"finalizers,omitempty"`
	// Owners are the ownerReferences as "Kind/name uid#n".
	Owners []string `json:"owners,omitempty"`
	// Deleting is true when metadata.deletionTimestamp is set.
	Deleting bool `json:"deleting,omitempty"`
	// Content is every top-level field but apiVersion, kind and metadata
	// (data, spec, status, type ...).
	Content map[string]any `json:"content,omitempty"`
	// Managers are metadata.managedFields as "manager operation
	// [subresource] fields", in order, only for steps that ask (server-side
	// apply cases): time is dropped.
	Managers []string `json:"managers,omitempty"`
}

// List is a list reduced to what carries meaning.
type List struct {
	// RV is the list's resourceVersion as a point between the case's
	// writes (see Normalize).
	RV string `json:"rv,omitempty"`
	// HasContinue is true when the list has a continue token.
	HasContinue bool `json:"hasContinue,omitempty"`
	// Remaining is metadata.remainingItemCount.
	Remaining *int64 `json:"remaining,omitempty"`
	// Items are the list's objects, in the server's order.
	Items []Object `json:"items"`
}

// Event is one watch event: its type, the object's name and
// resourceVersion; for BOOKMARK whether it ends WatchList's initial
// events; for ERROR the Status code and reason.
type Event struct {
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type string `json:"type"`
	// Name is the object's name (none for BOOKMARK and ERROR).
	Name string `json:"name,omitempty"`
	// RV is the object's resourceVersion as a write's rank, or a
	// bookmark's as a point (see Normalize).
	RV string `json:"rv,omitempty"`
	// InitialEventsEnd is true for the bookmark annotated
	// k8s.io/initial-events-end.
	InitialEventsEnd bool `json:"initialEventsEnd,omitempty"`
	// Code and Reason are an ERROR event's Status code and reason.
	Code   int    `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// initialEventsEndAnnotation is metav1.InitialEventsAnnotationKey.
const initialEventsEndAnnotation = "k8s.io/initial-events-end"

// Normalize turns the raw answers of one case into the answers the
// comparison looks at. It is a pure function of its input.
//
// resourceVersions: every resourceVersion an object carries (in a body, a
// list item or a watch event other than BOOKMARK) is a write the case
// observed; these are ranked numerically and replaced by rv#1, rv#2 ...,
// so their relative order is kept. The resourceVersion of a list or a
// bookmark is a point in time, not a write: on a real server unrelated
// writes (leases, other namespaces) move it past the case's last write,
// so it is replaced by the rank of the latest observed write at or before
// it, written "rv#k+" ("rv#0+" before any). Non-numeric values are kept
// as they are.
//
// UIDs become uid#1, uid#2 ... in order of first appearance (objects'
// own UIDs, then their owner references', step by step).
func Normalize(raw []RawAnswer) []Answer {
	n := newNormalizer(raw)
	out := make([]Answer, 0, len(raw))
	for _, r := range raw {
		out = append(out, n.answer(r))
	}
	return out
}

// normalizer holds the case-wide identities.
type normalizer struct {
	writes []uint64 // sorted, unique
	uids   map[string]string
}

func newNormalizer(raw []RawAnswer) *normalizer {
	n := &normalizer{uids: map[string]string{}}
	seen := map[uint64]bool{}
	addRV := func(obj map[string]any) {
		if v, ok := parseRV(str(meta(obj), "resourceVersion")); ok && !seen[v] {
			seen[v] = true
			n.writes = append(n.writes, v)
		}
	}
	for _, r := range raw {
		if r.Body != nil && !isStatus(r.Body) {
			if items, ok := r.Body["items"].([]any); ok {
				for _, it := range items {
					if m, ok := it.(map[string]any); ok {
						addRV(m)
					}
				}
			} else {
				addRV(r.Body)
			}
		}
		for _, ev := range r.Events {
			if ev.Type != "BOOKMARK" && ev.Type != "ERROR" {
				addRV(ev.Object)
			}
		}
	}
	sort.Slice(n.writes, func(i, j int) bool { return n.writes[i] < n.writes[j] })
	// UIDs in order of first appearance.
	var visit func(obj map[string]any)
	visit = func(obj map[string]any) {
		n.uid(str(meta(obj), "uid"))
		for _, o := range slice(meta(obj), "ownerReferences") {
			if om, ok := o.(map[string]any); ok {
				n.uid(str(om, "uid"))
			}
		}
	}
	for _, r := range raw {
		if r.Body != nil && !isStatus(r.Body) {
			if items, ok := r.Body["items"].([]any); ok {
				for _, it := range items {
					if m, ok := it.(map[string]any); ok {
						visit(m)
					}
				}
			} else {
				visit(r.Body)
			}
		}
		for _, ev := range r.Events {
			if ev.Type != "ERROR" {
				visit(ev.Object)
			}
		}
	}
	return n
}

// uid returns the identity of a UID, making a new one on first sight.
func (n *normalizer) uid(u string) string {
	if u == "" {
		return ""
	}
	if id, ok := n.uids[u]; ok {
		return id
	}
	id := fmt.Sprintf("uid#%d", len(n.uids)+1)
	n.uids[u] = id
	return id
}

// writeRV is the rank of an object's resourceVersion.
func (n *normalizer) writeRV(rv string) string {
	v, ok := parseRV(rv)
	if !ok {
		return rv
	}
	i := sort.Search(len(n.writes), func(i int) bool { return n.writes[i] >= v })
	if i < len(n.writes) && n.writes[i] == v {
		return fmt.Sprintf("rv#%d", i+1)
	}
	return n.pointRV(rv)
}

// pointRV is the rank of the latest write at or before a list's or
// bookmark's resourceVersion, with a "+".
func (n *normalizer) pointRV(rv string) string {
	v, ok := parseRV(rv)
	if !ok {
		return rv
	}
	k := sort.Search(len(n.writes), func(i int) bool { return n.writes[i] > v })
	return fmt.Sprintf("rv#%d+", k)
}

func (n *normalizer) answer(r RawAnswer) Answer {
	a := Answer{Step: r.Step, Code: r.Code, Note: r.Note}
	switch {
	case r.Body == nil:
	case isStatus(r.Body):
		a.Status = str(r.Body, "status")
		a.Reason = str(r.Body, "reason")
		if c, ok := number(r.Body["code"]); ok {
			a.BodyCode = int(c)
		}
		if det, ok := r.Body["details"].(map[string]any); ok {
			d := Details{Name: str(det, "name"), Group: str(det, "group"), Kind: str(det, "kind"), UID: n.uid(str(det, "uid"))}
			d.RetryAfter, _ = number(det["retryAfterSeconds"])
			if d != (Details{}) {
				a.Details = &d
			}
			for _, c := range slice(det, "causes") {
				if cm, ok := c.(map[string]any); ok {
					c := Cause{Field: str(cm, "field"), Type: str(cm, "reason")}
					if c.Type == "FieldManagerConflict" {
						c.Message = str(cm, "message") // names the manager
					}
					a.Causes = append(a.Causes, c)
				}
			}
			sort.Slice(a.Causes, func(i, j int) bool {
				if a.Causes[i].Field != a.Causes[j].Field {
					return a.Causes[i].Field < a.Causes[j].Field
				}
				return a.Causes[i].Type < a.Causes[j].Type
			})
		}
		a.HasContinue = str(meta(r.Body), "continue") != ""
	case isList(r.Body):
		l := &List{Items: []Object{}}
		md := meta(r.Body)
		l.RV = n.pointRV(str(md, "resourceVersion"))
		l.HasContinue = str(md, "continue") != ""
		if rem, ok := number(md["remainingItemCount"]); ok {
			l.Remaining = &rem
		}
		for _, it := range slice(r.Body, "items") {
			if m, ok := it.(map[string]any); ok {
				l.Items = append(l.Items, n.object(m))
			}
		}
		a.List = l
	default:
		o := n.object(r.Body)
		if r.Managers {
			o.Managers = managers(r.Body)
		}
		a.Object = &o
	}
	for _, ev := range r.Events {
		a.Events = append(a.Events, n.event(ev))
	}
	return a
}

func (n *normalizer) event(ev RawEvent) Event {
	e := Event{Type: ev.Type}
	switch ev.Type {
	case "ERROR":
		if c, ok := number(ev.Object["code"]); ok {
			e.Code = int(c)
		}
		e.Reason = str(ev.Object, "reason")
	case "BOOKMARK":
		md := meta(ev.Object)
		e.RV = n.pointRV(str(md, "resourceVersion"))
		if ann, ok := md["annotations"].(map[string]any); ok && ann[initialEventsEndAnnotation] == "true" {
			e.InitialEventsEnd = true
		}
	default:
		md := meta(ev.Object)
		e.Name = objectName(md)
		e.RV = n.writeRV(str(md, "resourceVersion"))
	}
	return e
}

// object reduces one object.
func (n *normalizer) object(obj map[string]any) Object {
	md := meta(obj)
	o := Object{
		Name: objectName(md),
		UID:  n.uid(str(md, "uid")),
		RV:   n.writeRV(str(md, "resourceVersion")),
	}
	if g, ok := number(md["generation"]); ok {
		o.Generation = g
	}
	o.Labels = stringMap(md["labels"])
	o.Annotations = stringMap(md["annotations"])
	for _, f := range slice(md, "finalizers") {
		if s, ok := f.(string); ok {
			o.Finalizers = append(o.Finalizers, s)
		}
	}
	for _, r := range slice(md, "ownerReferences") {
		if rm, ok := r.(map[string]any); ok {
			o.Owners = append(o.Owners, fmt.Sprintf("%s/%s %s", str(rm, "kind"), str(rm, "name"), n.uid(str(rm, "uid"))))
		}
	}
	o.Deleting = md["deletionTimestamp"] != nil
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		if o.Content == nil {
			o.Content = map[string]any{}
		}
		o.Content[k] = generatedNames(v)
	}
	return o
}

// tokenVolumeName is the name ServiceAccount admission gives a Pod's
// projected token volume: "kube-api-access-" and five characters of
// apimachinery's utilrand alphabet, random on every create.
var tokenVolumeName = regexp.MustCompile(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

// generatedNames returns v (a decoded JSON value) with each random name a
// server generates inside an object's content (the token volume's)
// replaced by its prefix and "<generated>", as objectName does for
// generateName: two servers agree on the prefix, never on the suffix.
func generatedNames(v any) any {
	switch x := v.(type) {
	case string:
		if tokenVolumeName.MatchString(x) {
			return "kube-api-access-<generated>"
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = generatedNames(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = generatedNames(e)
		}
		return out
	}
	return v
}

// objectName is metadata.name, with a generated suffix replaced.
func objectName(md map[string]any) string {
	name, prefix := str(md, "name"), str(md, "generateName")
	if prefix != "" && strings.HasPrefix(name, prefix) && len(name) == len(prefix)+5 {
		return prefix + "<generated>"
	}
	return name
}

func isStatus(body map[string]any) bool {
	return str(body, "kind") == "Status"
}

func isList(body map[string]any) bool {
	_, ok := body["items"]
	return ok || strings.HasSuffix(str(body, "kind"), "List")
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	return m
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func slice(m map[string]any, key string) []any {
	s, _ := m[key].([]any)
	return s
}

// number reads a JSON number (float64 from encoding/json, int64 from
// apimachinery's decoder).
func number(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, _ := x.(string)
		out[k] = s
	}
	return out
}

func parseRV(rv string) (uint64, bool) {
	if rv == "" {
		return 0, false
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	return v, err == nil
}

// managers renders an object's managedFields without their times.
func managers(obj map[string]any) []string {
	var out []string
	for _, e := range slice(meta(obj), "managedFields") {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		fields, _ := json.Marshal(m["fieldsV1"])
		line := str(m, "manager") + " " + str(m, "operation")
		if sub := str(m, "subresource"); sub != "" {
			line += " " + sub
		}
		out = append(out, line+" "+string(fields))
	}
	return out
}
