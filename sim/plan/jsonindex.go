package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// jsonIndex maps field paths of a JSON document ("steps[3].op") to the byte
// offset where they start, so that errors found after decoding can name the
// line. Building it also checks what encoding/json would let through or
// report without a position: unknown and duplicate fields (exact, case
// sensitive names) and malformed durations.
type jsonIndex struct {
	data []byte
	offs map[string]int64
	errs []*PlanError
	// newlines are the offsets of the data's newlines (nil: not computed).
	newlines []int64
}

var (
	durationType   = reflect.TypeOf(Duration(0))
	rawMessageType = reflect.TypeOf(json.RawMessage(nil))
)

// indexJSON walks data (a Plan document) and returns its index. Syntax
// errors stop the walk silently: the decoder reports them.
func indexJSON(data []byte, root reflect.Type) *jsonIndex {
	ix := &jsonIndex{data: data, offs: map[string]int64{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	_ = ix.walk(dec, "", root, 0)
	return ix
}

// maxDepth bounds the nesting the index follows with field paths (a plan
// needs a handful of levels; raw objects are skipped without paths). Deeper
// input is an error: following it would build ever longer paths.
const maxDepth = 64

// errTooDeep stops a walk that went past maxDepth.
var errTooDeep = errors.New("plan: too deeply nested")

// start returns the offset of the next token at or after off.
func (ix *jsonIndex) start(off int64) int64 {
	for off < int64(len(ix.data)) {
		switch ix.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// line returns the 1-based line of offset off (a binary search over the
// offsets of newlines, found once).
func (ix *jsonIndex) line(off int64) int {
	if ix.newlines == nil {
		ix.newlines = []int64{}
		for i, c := range ix.data {
			if c == '\n' {
				ix.newlines = append(ix.newlines, int64(i))
			}
		}
	}
	n, _ := slices.BinarySearch(ix.newlines, off)
	return n + 1
}

// addErr records a problem; past a bound, problems are counted, not kept.
func (ix *jsonIndex) addErr(e *PlanError) {
	if len(ix.errs) < 4*maxPlanErrors {
		ix.errs = append(ix.errs, e)
	}
}

// lineOf returns the line of path, or of its nearest indexed ancestor; 0 if
// nothing is known.
func (ix *jsonIndex) lineOf(path string) int {
	for {
		if off, ok := ix.offs[path]; ok {
			return ix.line(off)
		}
		if path == "" {
			return 0
		}
		path = parentPath(path)
	}
}

// parentPath strips the last element of a field path.
func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// walk reads one value at path, of Go type t (nil: not checked), depth
// levels deep.
func (ix *jsonIndex) walk(dec *json.Decoder, path string, t reflect.Type, depth int) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	off := ix.start(dec.InputOffset())
	if depth > maxDepth {
		ix.addErr(&PlanError{Field: path, Line: ix.line(off),
			Msg: fmt.Sprintf("nested deeper than %d levels: a plan has a handful", maxDepth)})
		return errTooDeep
	}
	if _, ok := ix.offs[path]; !ok {
		ix.offs[path] = off
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if t == durationType {
		var raw []byte
		switch v := tok.(type) {
		case string:
			raw, _ = json.Marshal(v)
		case json.Number:
			raw = []byte(v)
		case nil:
			return nil
		default:
			raw = []byte(fmt.Sprint(v))
		}
		if _, err := parseDurationJSON(raw); err != nil {
			ix.addErr(&PlanError{Field: path, Line: ix.line(off), Msg: err.Error()})
		}
		if d, ok := tok.(json.Delim); ok {
			return ix.skip(dec, d)
		}
		return nil
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if t == rawMessageType {
		return ix.skip(dec, d)
	}
	switch d {
	case '{':
		var fields map[string]reflect.Type
		checked := t != nil && t.Kind() == reflect.Struct
		if checked {
			fields = jsonFields(t)
		}
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			koff := ix.start(dec.InputOffset())
			ktok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := ktok.(string)
			child := joinPath(path, key)
			if _, ok := ix.offs[child]; !ok {
				ix.offs[child] = koff
			}
			ct := elem
			if checked {
				ft, known := fields[key]
				switch {
				case !known:
					ix.addErr(&PlanError{Field: child, Line: ix.line(koff),
						Msg: fmt.Sprintf("unknown field %q (known: %s)", key, strings.Join(slices.Sorted(maps.Keys(fields)), ", "))})
				case seen[key]:
					ix.addErr(&PlanError{Field: child, Line: ix.line(koff),
						Msg: fmt.Sprintf("field %q given twice", key)})
				}
				seen[key] = true
				ct = ft
			}
			if err := ix.walk(dec, child, ct, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := ix.walk(dec, path+"["+strconv.Itoa(i)+"]", elem, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	return nil
}

// skip consumes the rest of a composite value opened by d.
func (ix *jsonIndex) skip(dec *json.Decoder, d json.Delim) error {
	if d != '{' && d != '[' {
		return nil
	}
	depth := 1
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if dd, ok := tok.(json.Delim); ok {
			if dd == '{' || dd == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// jsonFields returns the JSON names of struct type t's fields and their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		out[name] = f.Type
	}
	return out
}
