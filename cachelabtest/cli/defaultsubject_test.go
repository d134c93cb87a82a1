package cli

import (
	"strings"
	"testing"
)

// Without --subject, `run --random` and `hunt` take the lab's Bellerophon
// in cachelab, and the one controller a user's own binary registers
// (cachelabtest.Register) in theirs. Before, a user's binary answered
// `mylab hunt` with "unknown subject "bellerophon"".
func TestTheDefaultSubjectIsTheOneYourBinaryRegisters(t *testing.T) {
	for _, c := range []struct {
		lab        bool
		registered []string
		want, err  string
	}{
		{true, []string{"svc"}, "bellerophon", ""},
		{false, []string{"svc"}, "svc", ""},
		{false, nil, "", "neither the lab's bellerophon nor a controller registered"},
		{false, []string{"a", "b"}, "", "several controllers (a, b)"},
	} {
		got, err := defaultSubjectOf(c.lab, c.registered)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("bellerophon %v, registered %v: %q, %v; want %q, an error containing %q", c.lab, c.registered, got, err, c.want, c.err)
		}
	}
	if s, err := defaultSubject(); s != "bellerophon" || err != nil {
		t.Errorf("in this binary (the lab's subjects imported): %q, %v; want bellerophon", s, err)
	}
}
