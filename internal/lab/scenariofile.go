package lab

import (
	"path/filepath"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// LoadFile reads a plan file (JSON) or a scenario file (.txt) as the plan
// of subject: a scenario's steps aimed at "subject" aim at it, and so do a
// plan file's steps aimed at "subject" or at the subject it was saved
// with (another test's name, when one test saved it and another runs it).
func LoadFile(path, subject string) (*sim.Plan, error) {
	if filepath.Ext(path) == ".txt" {
		s, err := scenarios.LoadFile(path)
		if err != nil {
			return nil, err
		}
		p := s.PlanFor(subject)
		return &p, nil
	}
	p, err := sim.LoadPlanFile(path)
	if err != nil {
		return nil, err
	}
	for i := range p.Steps {
		if t := p.Steps[i].Target; t != "" && (t == p.Subject || t == scenarios.TargetSubject) {
			p.Steps[i].Target = subject
		}
	}
	p.Subject = subject
	return p, nil
}
