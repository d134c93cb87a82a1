package scenarios

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cachelab/cachelab/sim"
)

// FuzzParse feeds Parse arbitrary scenario files: it must return a
// scenario or a *ParseError wrapping ErrSyntax (file:line: what to do),
// never panic; a scenario it accepts must give each subject it names a plan
// that saves and loads.
func FuzzParse(f *testing.F) {
	f.Add([]byte(wellFormed))
	f.Add([]byte(claimed))
	for _, name := range []string{"tombstone-after-410", "quiescence-is-not-sync"} {
		if b, err := data.ReadFile("data/" + name + ".txt"); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("scenario x\ntitle t\nedge 7\nat 1s user delete configmaps default/a\n----\nnaivecache: *=pass\nclaim naivecache: flip desired 1 sound at 0s..1s\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		s, err := Parse("data/x.txt", text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) || pe.Msg == "" {
				t.Fatalf("error %v (%T) is not a *ParseError with a message", err, err)
			}
			return
		}
		for _, subj := range s.Subjects() {
			p := s.PlanFor(subj)
			var buf bytes.Buffer
			if err := p.Save(&buf); err != nil {
				t.Fatalf("%s: save: %v", subj, err)
			}
			if _, err := sim.LoadPlan(&buf); err != nil {
				t.Fatalf("%s: the saved plan does not load: %v\n%s", subj, err, buf.Bytes())
			}
			_ = s.CheckClaims(subj, &sim.Trace{})
		}
	})
}
