package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Defaults applied by LoadPlan (and Run) to fields left empty.
const (
	// DefaultAccess is the access path of a plan that names none.
	DefaultAccess = "direct"
	// DefaultDeadline is the virtual deadline of a plan that sets none.
	DefaultDeadline = 5 * time.Minute
	// DefaultQuiet is the quiet period of a plan that sets none.
	DefaultQuiet = 10 * time.Second
)

// Actors are the names a Step's Actor may take.
var Actors = []string{"user", "competitor", "kubelet", "faults", "controller"}

// The ops each actor may perform. wait-quiet is an op of every actor.
var (
	apiOps        = []string{"create", "update", "patch", "delete", "update-status", "patch-status", "wait-quiet"}
	faultOps      = []string{"disconnect", "break", "expire", "compact", "stale-replica", "fail-next", "timeout-next-write", "hold", "release", "wait-quiet"}
	controllerOps = []string{"crash", "restart", "wait-quiet"}
	opsOf         = map[string][]string{
		"user": apiOps, "competitor": apiOps, "kubelet": apiOps,
		"faults": faultOps, "controller": controllerOps,
	}
	// stepFields lists, per op, the Step fields (JSON names) it uses besides
	// at, actor and op. Any other field set is an error.
	stepFields = map[string][]string{
		"create":             {"resource", "namespace", "object"},
		"update":             {"resource", "namespace", "object"},
		"update-status":      {"resource", "namespace", "name", "object"},
		"patch-status":       {"resource", "namespace", "name", "patch", "patchType"},
		"patch":              {"resource", "namespace", "name", "patch", "patchType", "child"},
		"delete":             {"resource", "namespace", "name", "child"},
		"disconnect":         {"resource", "target"},
		"break":              {"resource", "target"},
		"expire":             {"resource", "target"},
		"compact":            {"lag"},
		"stale-replica":      {"lag", "for", "target", "notOlderThan", "asOf"},
		"fail-next":          {"code", "verb", "resource", "target", "afterWrite"},
		"timeout-next-write": {"verb", "resource", "target", "afterWrite"},
		"hold":               {"resource", "target", "for"},
		"release":            {"resource", "target"},
		"crash":              {"midReconcile", "afterWrite"},
		"restart":            {},
		"wait-quiet":         {},
	}
	// FailNextCodes are the status codes fail-next can inject.
	FailNextCodes = []int{410, 429, 500, 503, 504}
	// ErrorCodesAllowed are the codes FaultPolicy.ErrorCodes may list.
	ErrorCodesAllowed = []int{429, 500, 503, 504}
	// DefaultErrorCodes are the codes of random request errors when
	// FaultPolicy.ErrorCodes is empty.
	DefaultErrorCodes = []int{429, 500, 503}
	// Verbs are the verbs fail-next may name.
	Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	// WriteVerbs are the verbs timeout-next-write may name.
	WriteVerbs = []string{"create", "update", "patch", "delete"}
	// PatchTypes are the values of Step.PatchType.
	PatchTypes = []string{"merge", "json", "strategic"}
	// DistributionKinds are the values of Distribution.Kind.
	DistributionKinds = []string{"none", "fixed", "uniform", "exponential"}
	// AccessPaths are the values of Plan.Access.
	AccessPaths = []string{"direct", "http"}
)

// PlanError is one problem with a plan: where (file and line when loaded
// from a file, and the field path) and what is wrong.
type PlanError struct {
	// File is the plan file's name, if the plan came from a file.
	File string
	// Line is the 1-based line of the field in the file, 0 if unknown.
	Line int
	// Field is the path of the field, e.g. "steps[3].op".
	Field string
	// Msg says what is wrong and what is allowed.
	Msg string
}

// Error formats the problem as "plan.json:12: steps[3].op: unknown op ...".
func (e *PlanError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxPlanErrors bounds how many problems one error reports.
const maxPlanErrors = 10

// joinPlanErrors returns the problems as one error (nil if none).
func joinPlanErrors(errs []*PlanError) error {
	if len(errs) == 0 {
		return nil
	}
	out := make([]error, 0, maxPlanErrors+1)
	for i, e := range errs {
		if i == maxPlanErrors {
			out = append(out, fmt.Errorf("... and %d more problems", len(errs)-maxPlanErrors))
			break
		}
		out = append(out, e)
	}
	return errors.Join(out...)
}

// LoadPlan reads a plan, rejects unknown fields and bad values with errors
// naming the field and the allowed values, and applies the defaults (see
// ApplyDefaults). Errors carry the line of the offending field.
func LoadPlan(r io.Reader) (*Plan, error) {
	return loadPlan(r, "")
}

// LoadPlanFile reads the plan file at path (see LoadPlan); errors are
// prefixed with "path:line:".
func LoadPlanFile(path string) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sim: open plan: %w", err)
	}
	defer f.Close()
	return loadPlan(f, path)
}

func loadPlan(r io.Reader, file string) (*Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("sim: read plan: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &PlanError{File: file, Msg: "empty plan: want a JSON object with version, seed, subject, steps"}
	}
	ix := indexJSON(data, reflect.TypeOf(Plan{}))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		if len(ix.errs) > 0 {
			return nil, ix.withFile(file)
		}
		return nil, decodeError(ix, file, err)
	}
	if len(ix.errs) > 0 {
		return nil, ix.withFile(file)
	}
	if dec.More() {
		off := ix.start(dec.InputOffset())
		return nil, &PlanError{File: file, Line: ix.line(off), Msg: "unexpected data after the plan object"}
	}
	p.Normalize()
	p.ApplyDefaults()
	errs := p.validate()
	for _, e := range errs {
		e.File = file
		e.Line = ix.lineOf(e.Field)
	}
	if err := joinPlanErrors(errs); err != nil {
		return nil, err
	}
	return &p, nil
}

func (ix *jsonIndex) withFile(file string) error {
	for _, e := range ix.errs {
		e.File = file
	}
	return joinPlanErrors(ix.errs)
}

// decodeError turns an encoding/json error into a PlanError with a line.
func decodeError(ix *jsonIndex, file string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &PlanError{File: file, Line: ix.line(syn.Offset), Msg: "malformed JSON: " + syn.Error()}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(plan)"
		}
		return &PlanError{File: file, Line: ix.line(typ.Offset), Field: field,
			Msg: fmt.Sprintf("want %s, got %s", jsonKind(typ.Type), typ.Value)}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &PlanError{File: file, Line: ix.line(int64(len(ix.data))), Msg: "malformed JSON: unexpected end of input"}
	}
	return &PlanError{File: file, Msg: err.Error()}
}

// jsonKind names, in words, the JSON value a Go type reads (decode errors
// otherwise name Go types such as plan.Distribution or uint64).
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list (JSON array)"
	case reflect.Map, reflect.Struct:
		return "an object ({...})"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a JSON " + t.Kind().String()
}

// Save writes p as indented JSON, in the form LoadPlan reads.
func (p *Plan) Save(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(p)
}

// Validate checks p (with defaults applied) and returns every problem, each
// naming the field and the allowed values.
func (p *Plan) Validate() error {
	q := p.Clone()
	q.Normalize()
	q.ApplyDefaults()
	return joinPlanErrors(q.validate())
}

// Clone returns a copy of p that shares nothing mutable with it except the
// raw JSON of objects and patches, which the sim never modifies.
func (p *Plan) Clone() *Plan {
	q := *p
	q.SubjectParams = maps.Clone(p.SubjectParams)
	q.Objects = slices.Clone(p.Objects)
	q.Steps = slices.Clone(p.Steps)
	q.Faults.ErrorCodes = slices.Clone(p.Faults.ErrorCodes)
	q.Schedule = slices.Clone(p.Schedule)
	if p.Kubelet != nil {
		k := *p.Kubelet
		q.Kubelet = &k
	}
	if p.Competitor != nil {
		c := *p.Competitor
		q.Competitor = &c
	}
	return &q
}

// ApplyDefaults sets the optional fields left empty to their defaults:
// Access "direct", Deadline 5m, Quiet 10s, and ErrorCodes 429, 500, 503 when
// ErrorRate is set.
func (p *Plan) ApplyDefaults() {
	if p.Access == "" {
		p.Access = DefaultAccess
	}
	if p.Deadline == 0 {
		p.Deadline = Duration(DefaultDeadline)
	}
	if p.Quiet == 0 {
		p.Quiet = Duration(DefaultQuiet)
	}
	if p.Faults.ErrorRate > 0 && len(p.Faults.ErrorCodes) == 0 {
		p.Faults.ErrorCodes = slices.Clone(DefaultErrorCodes)
	}
}

// Normalize makes equal plans equal as Go values, as LoadPlan returns
// them: empty collections become nil (Steps an empty slice) and raw JSON is
// compacted, so that a plan reads back from its JSON unchanged.
func (p *Plan) Normalize() {
	if len(p.SubjectParams) == 0 {
		p.SubjectParams = nil
	}
	if len(p.Objects) == 0 {
		p.Objects = nil
	}
	for i := range p.Objects {
		p.Objects[i] = compactRaw(p.Objects[i])
	}
	if p.Steps == nil {
		p.Steps = []Step{}
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		s.Object = compactRaw(s.Object)
		s.Patch = compactRaw(s.Patch)
	}
	if len(p.Faults.ErrorCodes) == 0 {
		p.Faults.ErrorCodes = nil
	}
	if len(p.Schedule) == 0 {
		p.Schedule = nil
	}
	if p.Competitor != nil {
		p.Competitor.Patch = compactRaw(p.Competitor.Patch)
	}
}

func compactRaw(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		return m
	}
	if b.String() == "null" {
		return nil
	}
	return b.Bytes()
}

// validate returns every problem of p (defaults applied).
func (p *Plan) validate() []*PlanError {
	var errs []*PlanError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &PlanError{Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	if p.Version != PlanVersion {
		if p.Version == 0 {
			bad("version", "missing: set \"version\": %d", PlanVersion)
		} else {
			bad("version", "unsupported version %d (this code reads version %d)", p.Version, PlanVersion)
		}
	}
	if p.Subject == "" {
		names := subjectNames()
		if len(names) > 0 {
			bad("subject", "missing: name a registered subject (known: %s)", strings.Join(names, ", "))
		} else {
			bad("subject", "missing: name a registered subject")
		}
	}
	if !slices.Contains(AccessPaths, p.Access) {
		bad("access", "unknown access %q (known: %s)", p.Access, strings.Join(AccessPaths, ", "))
	}
	if p.Deadline < 0 {
		bad("deadline", "must not be negative, got %s", p.Deadline)
	}
	if p.Quiet < 0 {
		bad("quiet", "must not be negative, got %s", p.Quiet)
	}
	if p.LivelockAfter < 0 {
		bad("livelockAfter", "must not be negative, got %d", p.LivelockAfter)
	}
	if p.MaxRecords < 0 {
		bad("maxRecords", "must not be negative, got %d", p.MaxRecords)
	}
	for i, k := range p.Schedule {
		if k == "" {
			bad(fmt.Sprintf("schedule[%d]", i), "empty key: give the keys of a recorded trace's schedule")
		}
	}
	if p.Kubelet != nil && p.Kubelet.ReadyAfter < 0 {
		bad("kubelet.readyAfter", "must not be negative, got %s", p.Kubelet.ReadyAfter)
	}
	if c := p.Competitor; c != nil {
		if c.Resource == "" {
			bad("competitor.resource", "missing: name the resource the competitor writes (\"configmaps\")")
		}
		var patch map[string]any
		if len(c.Patch) == 0 {
			bad("competitor.patch", "missing: give the JSON merge patch the competitor enforces")
		} else if err := json.Unmarshal(c.Patch, &patch); err != nil || patch == nil {
			bad("competitor.patch", "want a JSON object (a merge patch)")
		}
		if c.Delay < 0 {
			bad("competitor.delay", "must not be negative, got %s", c.Delay)
		}
	}
	for i, o := range p.Objects {
		if msg := checkObject(o, false); msg != "" {
			bad(fmt.Sprintf("objects[%d]", i), "%s", msg)
		}
	}
	for i := range p.Steps {
		errs = append(errs, p.validateStep(i)...)
	}
	errs = append(errs, p.Faults.validate("faults")...)
	return errs
}

// checkObject returns what is wrong with an object's JSON, "" if fine.
func checkObject(raw json.RawMessage, needName bool) string {
	if len(raw) == 0 {
		return "missing: give the object as JSON with apiVersion, kind and metadata.name"
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "not a Kubernetes object: " + err.Error()
	}
	var missing []string
	if head.APIVersion == "" {
		missing = append(missing, "apiVersion")
	}
	if head.Kind == "" {
		missing = append(missing, "kind")
	}
	if head.Metadata.Name == "" && (needName || head.Metadata.GenerateName == "") {
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return "object lacks " + strings.Join(missing, ", ")
	}
	return ""
}

// checkStatusObject returns what is wrong with an update-status step (the
// field and the message), "" if fine. The step sets only the status of the
// object it names: its object needs a status; a name (the step's or the
// object's metadata.name, not two different ones); and apiVersion and kind
// only when no resource is named.
func checkStatusObject(s *Step) (field, msg string) {
	if len(s.Object) == 0 {
		return "object", "missing: give the status to set, as {\"status\": {...}} (with apiVersion, kind and metadata.name unless resource and name are given)"
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Status json.RawMessage `json:"status"`
	}
	if err := json.Unmarshal(s.Object, &head); err != nil {
		return "object", "not a JSON object: " + err.Error()
	}
	var missing []string
	if s.Resource == "" && head.APIVersion == "" {
		missing = append(missing, "apiVersion (or the step's resource)")
	}
	if s.Resource == "" && head.Kind == "" {
		missing = append(missing, "kind (or the step's resource)")
	}
	if s.Name == "" && head.Metadata.Name == "" {
		missing = append(missing, "metadata.name (or the step's name)")
	}
	if len(head.Status) == 0 || string(head.Status) == "null" {
		missing = append(missing, "status (update-status sets only the status)")
	}
	if len(missing) > 0 {
		return "object", "object lacks " + strings.Join(missing, ", ")
	}
	if s.Name != "" && head.Metadata.Name != "" && s.Name != head.Metadata.Name {
		return "name", fmt.Sprintf("%q, but the object's metadata.name is %q: give one name", s.Name, head.Metadata.Name)
	}
	return "", ""
}

// validateStep checks p.Steps[i].
func (p *Plan) validateStep(i int) []*PlanError {
	s := &p.Steps[i]
	path := fmt.Sprintf("steps[%d]", i)
	var errs []*PlanError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &PlanError{Field: path + "." + field, Msg: fmt.Sprintf(format, a...)})
	}
	if s.At < 0 {
		bad("at", "must not be negative, got %s", s.At)
	} else if p.Deadline > 0 && s.At > p.Deadline {
		bad("at", "%s is after the plan's deadline %s", s.At, p.Deadline)
	}
	ops, ok := opsOf[s.Actor]
	if !ok {
		if s.Actor == "" {
			bad("actor", "missing (known: %s)", strings.Join(Actors, ", "))
		} else {
			bad("actor", "unknown actor %q (known: %s)", s.Actor, strings.Join(Actors, ", "))
		}
		return errs
	}
	if !slices.Contains(ops, s.Op) {
		if _, known := stepFields[s.Op]; known {
			bad("op", "op %q is not an op of actor %q (ops of %s: %s)", s.Op, s.Actor, s.Actor, strings.Join(ops, ", "))
		} else if s.Op == "" {
			bad("op", "missing (ops of %s: %s)", s.Actor, strings.Join(ops, ", "))
		} else {
			bad("op", "unknown op %q (ops of %s: %s)", s.Op, s.Actor, strings.Join(ops, ", "))
		}
		return errs
	}
	allowed := stepFields[s.Op]
	for _, f := range s.setFields() {
		if !slices.Contains(allowed, f) {
			if len(allowed) == 0 {
				bad(f, "not used by op %s (which takes no parameters)", s.Op)
			} else {
				bad(f, "not used by op %s (it uses: %s)", s.Op, strings.Join(allowed, ", "))
			}
		}
	}
	switch s.Op {
	case "create":
		if msg := checkObject(s.Object, false); msg != "" {
			bad("object", "%s", msg)
		}
	case "update":
		if msg := checkObject(s.Object, true); msg != "" {
			bad("object", "%s", msg)
		}
	case "update-status":
		if field, msg := checkStatusObject(s); msg != "" {
			bad(field, "%s", msg)
		}
	case "patch-status":
		if s.Name == "" {
			bad("name", "missing: name the object whose status to patch")
		}
		if s.Resource == "" {
			bad("resource", "missing: name the resource (\"bellerophons\")")
		}
		if len(s.Patch) == 0 {
			bad("patch", "missing: give the patch body as JSON ({\"status\": {...}})")
		} else if !json.Valid(s.Patch) {
			bad("patch", "not valid JSON")
		}
		if s.PatchType != "" && !slices.Contains(PatchTypes, s.PatchType) {
			bad("patchType", "unknown patch type %q (known: %s)", s.PatchType, strings.Join(PatchTypes, ", "))
		}
	case "patch":
		if s.Name == "" && s.Child == (ChildRef{}) {
			bad("name", "missing: name the object to patch (or pick a child)")
		}
		if len(s.Patch) == 0 {
			bad("patch", "missing: give the patch body as JSON")
		} else if !json.Valid(s.Patch) {
			bad("patch", "not valid JSON")
		}
		if s.PatchType != "" && !slices.Contains(PatchTypes, s.PatchType) {
			bad("patchType", "unknown patch type %q (known: %s)", s.PatchType, strings.Join(PatchTypes, ", "))
		}
	case "delete":
		if s.Name == "" && s.Child == (ChildRef{}) {
			bad("name", "missing: name the object to delete (or pick a child)")
		}
	case "compact":
		if s.Lag < 0 {
			bad("lag", "must not be negative (revisions kept before the latest), got %d", s.Lag)
		}
	case "stale-replica":
		if s.Lag < 0 {
			bad("lag", "must not be negative (revisions the replica is behind the latest when the step is played), got %d", s.Lag)
		}
	case "fail-next":
		if !slices.Contains(FailNextCodes, s.Code) {
			bad("code", "unsupported code %d (known: %s)", s.Code, joinInts(FailNextCodes))
		}
		if s.Verb != "" && !slices.Contains(Verbs, s.Verb) {
			bad("verb", "unknown verb %q (known: %s)", s.Verb, strings.Join(Verbs, ", "))
		}
	case "timeout-next-write":
		if s.Verb != "" && !slices.Contains(WriteVerbs, s.Verb) {
			bad("verb", "unknown write verb %q (known: %s)", s.Verb, strings.Join(WriteVerbs, ", "))
		}
	}
	if s.For < 0 {
		bad("for", "must not be negative, got %s", s.For)
	}
	if s.AfterWrite < 0 {
		bad("afterWrite", "must not be negative (the subject's write to crash or fault after, counted from 1), got %d", s.AfterWrite)
	}
	if s.AfterWrite > 0 && s.MidReconcile {
		bad("afterWrite", "give either midReconcile or afterWrite, not both")
	}
	if s.AsOf != "" {
		if _, _, err := ParseMoment(s.AsOf); err != nil {
			bad("asOf", "%v", err)
		}
	}
	if c := s.Child; c != (ChildRef{}) {
		switch {
		case s.Name != "":
			bad("child", "give either name or child, not both")
		case c.Owner == "" || c.OwnerName == "":
			bad("child", "owner (the owner's resource) and ownerName are required")
		case c.Index < 0:
			bad("child.index", "must not be negative, got %d", c.Index)
		}
	}
	return errs
}

// setFields lists the JSON names of s's optional fields that are set.
func (s *Step) setFields() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(s.Resource != "", "resource")
	add(s.Namespace != "", "namespace")
	add(s.Name != "", "name")
	add(len(s.Object) > 0, "object")
	add(len(s.Patch) > 0, "patch")
	add(s.PatchType != "", "patchType")
	add(s.Target != "", "target")
	add(s.Code != 0, "code")
	add(s.Verb != "", "verb")
	add(s.Lag != 0, "lag")
	add(s.For != 0, "for")
	add(s.MidReconcile, "midReconcile")
	add(s.AfterWrite != 0, "afterWrite")
	add(s.AsOf != "", "asOf")
	add(s.NotOlderThan, "notOlderThan")
	add(s.Child != ChildRef{}, "child")
	return out
}

// validate checks the fault policy's parameters.
func (f *FaultPolicy) validate(path string) []*PlanError {
	var errs []*PlanError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &PlanError{Field: path + "." + field, Msg: fmt.Sprintf(format, a...)})
	}
	errs = append(errs, f.Latency.validate(path+".latency")...)
	errs = append(errs, f.RequestLatency.validate(path+".requestLatency")...)
	prob := func(field string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad(field, "is a probability: want a number in [0, 1], got %v", v)
		}
	}
	prob("expireOnRewatch", f.ExpireOnRewatch)
	prob("errorRate", f.ErrorRate)
	prob("unknownOutcomeRate", f.UnknownOutcomeRate)
	prob("contractBreaking.dropRate", f.ContractBreaking.DropRate)
	prob("contractBreaking.duplicateRate", f.ContractBreaking.DuplicateRate)
	if f.DisconnectEvery < 0 {
		bad("disconnectEvery", "must not be negative, got %s", f.DisconnectEvery)
	}
	if f.StaleReplicaLag < 0 {
		bad("staleReplicaLag", "must not be negative, got %d", f.StaleReplicaLag)
	}
	if f.Until < 0 {
		bad("until", "must not be negative, got %s", f.Until)
	}
	for i, c := range f.ErrorCodes {
		if !slices.Contains(ErrorCodesAllowed, c) {
			bad(fmt.Sprintf("errorCodes[%d]", i), "unsupported code %d (known: %s)", c, joinInts(ErrorCodesAllowed))
		}
	}
	return errs
}

// validate checks a distribution.
func (d *Distribution) validate(path string) []*PlanError {
	var errs []*PlanError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &PlanError{Field: path + "." + field, Msg: fmt.Sprintf(format, a...)})
	}
	if d.Min < 0 {
		bad("min", "must not be negative, got %s", d.Min)
	}
	if d.Max < 0 {
		bad("max", "must not be negative, got %s", d.Max)
	}
	if d.Mean < 0 {
		bad("mean", "must not be negative, got %s", d.Mean)
	}
	switch d.Kind {
	case "", "none":
	case "fixed":
		if d.Min != 0 || d.Mean != 0 {
			bad("kind", "fixed uses max only (the fixed delay)")
		}
	case "uniform":
		if d.Min > d.Max {
			bad("max", "uniform needs min <= max, got min %s > max %s", d.Min, d.Max)
		}
		if d.Mean != 0 {
			bad("mean", "not used by uniform (it uses min and max)")
		}
	case "exponential":
		if d.Mean <= 0 {
			bad("mean", "exponential needs a positive mean")
		}
		if d.Min != 0 {
			bad("min", "not used by exponential (it uses mean and max, the cap)")
		}
	default:
		bad("kind", "unknown distribution %q (known: %s)", d.Kind, strings.Join(DistributionKinds, ", "))
	}
	return errs
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// KnownSubjects, when set, lists the registered subjects' names for error
// messages (package sim sets it to its registry's names).
var KnownSubjects func() []string

// subjectNames lists the registered subjects' names, if known.
func subjectNames() []string {
	if KnownSubjects == nil {
		return nil
	}
	return KnownSubjects()
}
