package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
)

//go:embed data/*.txt
var data embed.FS

// ErrUnknown is wrapped by Get's error for a name that is not a scenario.
var ErrUnknown = errors.New("scenarios: unknown scenario")

var catalog struct {
	once   sync.Once
	all    []*Scenario
	byName map[string]*Scenario
	err    error
}

func load() {
	catalog.byName = map[string]*Scenario{}
	files, err := fs.Glob(data, "data/*.txt")
	if err != nil {
		catalog.err = err
		return
	}
	sort.Strings(files)
	var errs []error
	for _, f := range files {
		b, err := data.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := Parse("scenarios/"+f, b)
		if err == nil {
			err = CheckCatalogue(s)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		catalog.all = append(catalog.all, s)
		catalog.byName[s.Name] = s
	}
	catalog.err = errors.Join(errs...)
}

// All returns the built-in scenarios, sorted by name. The error reports
// built-in files that do not parse (a defect the package's tests catch);
// the scenarios that do parse are returned with it.
func All() ([]*Scenario, error) {
	catalog.once.Do(load)
	return append([]*Scenario(nil), catalog.all...), catalog.err
}

// Names returns the names of the built-in scenarios, sorted.
func Names() []string {
	all, _ := All()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}

// Get returns the built-in scenario called name. An unknown name gives an
// error wrapping ErrUnknown that lists the nearest names.
func Get(name string) (*Scenario, error) {
	catalog.once.Do(load)
	if s, ok := catalog.byName[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w %q%s", ErrUnknown, name, Suggest(name, Names()))
}

// LoadFile reads a scenario file from disk.
func LoadFile(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return Parse(path, b)
}

// Suggest formats the near names of name among known for an error
// message: ": did you mean x?" or ": did you mean one of x, y?", or, when
// none is near, " (known: every name)".
func Suggest(name string, known []string) string {
	near := NearNames(name, known)
	switch {
	case len(near) == 1:
		return fmt.Sprintf(": did you mean %s?", near[0])
	case len(near) > 1:
		return fmt.Sprintf(": did you mean one of %s?", strings.Join(near, ", "))
	case len(known) > 0:
		return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
	}
	return ""
}

// NearNames returns the names of known closest to name: those within an edit
// distance of a third of name's length (at least 2), or that contain name or
// are contained in it, nearest first, at most 5.
func NearNames(name string, known []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := len(name) / 3
	if limit < 2 {
		limit = 2
	}
	lname := strings.ToLower(name)
	for _, k := range known {
		d := editDistance(lname, strings.ToLower(k))
		if d <= limit || (len(name) >= 3 && (strings.Contains(k, lname) || strings.Contains(lname, k))) {
			cs = append(cs, cand{k, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i, c := range cs {
		if i == 5 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Validate checks the names a scenario uses against what is registered:
// every expectation's subject among subjects, every invariant among
// invariantNames. Errors name the file and line and the near names.
func (s *Scenario) Validate(subjects, invariantNames []string) error {
	return errors.Join(s.ValidateSubjects(subjects), s.ValidateInvariants(invariantNames))
}

// ValidateSubjects checks that the Plan's subject and every expectation's
// subject are among subjects.
func (s *Scenario) ValidateSubjects(subjects []string) error {
	known := map[string]bool{}
	for _, n := range subjects {
		known[n] = true
	}
	var errs []error
	// A file that names no subject runs with the one under test.
	if s.Plan.Subject != "" && !known[s.Plan.Subject] {
		errs = append(errs, fmt.Errorf("%s: unknown subject %q%s", s.File, s.Plan.Subject, Suggest(s.Plan.Subject, subjects)))
	}
	seen := map[string]bool{}
	for _, e := range s.Expect {
		if !known[e.Subject] && !seen[e.Subject] && e.Subject != s.Plan.Subject {
			seen[e.Subject] = true
			errs = append(errs, &ParseError{File: s.File, Line: e.Line, Msg: fmt.Sprintf("unknown subject %q%s", e.Subject, Suggest(e.Subject, subjects))})
		}
	}
	return errors.Join(errs...)
}

// ValidateInvariants checks that every expectation names an invariant among
// invariantNames (or "*").
func (s *Scenario) ValidateInvariants(invariantNames []string) error {
	inv := map[string]bool{"*": true}
	for _, n := range invariantNames {
		inv[n] = true
	}
	var errs []error
	for _, e := range s.Expect {
		if !inv[e.Invariant] {
			errs = append(errs, &ParseError{File: s.File, Line: e.Line, Msg: fmt.Sprintf("unknown invariant %q%s", e.Invariant, Suggest(e.Invariant, invariantNames))})
		}
	}
	return errors.Join(errs...)
}
