package cachelabtest_test

import (
	"errors"
	"flag"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/internal/lab"
	"github.com/cachelab/cachelab/invariants"
	corev1 "k8s.io/api/core/v1"
)

// setFlag sets a flag for the test and restores it after.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag %s", name)
	}
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// Two planted bugs of two classes: the handler panics on ConfigMap "a"
// (no-panics), and the predicate never holds once ConfigMap "b" exists
// (eventual-convergence). By default random plans stop at the first
// failing plan and shrink it, so only that plan's classes are seen. With
// -cachelab.keepgoing they go on: every failing plan is reported once, as
// drawn, in a folder of its own, and both classes are found.
func TestKeepGoingFindsEveryFailingClassNotOnlyTheFirst(t *testing.T) {
	scratch(t)
	setFlag(t, "rapid.checks", "30")
	setFlag(t, "rapid.seed", "1")
	c := clientGo("a", false)
	c.Desired = func(s *cachelabtest.State) error {
		if _, ok := cachelabtest.Get[corev1.ConfigMap](s, "default", "b"); ok {
			return errors.New("b is never wanted")
		}
		return nil
	}
	classes := func(fs []*cachelabtest.Failure) map[string]bool {
		out := map[string]bool{}
		for _, f := range fs {
			for _, v := range f.Failed {
				out[v.Invariant] = true
			}
		}
		return out
	}
	first := cachelabtest.Catch(t, c, cachelabtest.Random())
	if len(first) == 0 {
		t.Fatal("random plans found neither planted bug")
	}
	setFlag(t, "cachelab.keepgoing", "true")
	all := cachelabtest.Catch(t, c, cachelabtest.Random())
	got := classes(all)
	if !got[lab.HealthNoPanics] || !got[invariants.NameEventualConvergence] {
		t.Fatalf("keep-going found %v over %d failing plans; want both planted classes (no-panics, eventual-convergence)", got, len(all))
	}
	seen := map[string]bool{}
	for _, f := range all {
		if seen[f.ReportPath] {
			t.Errorf("%s written twice: keep-going reports each failing plan in a folder of its own", f.ReportPath)
		}
		seen[f.ReportPath] = true
	}
	t.Logf("first failure only: %d failures (shrinking), classes %v; keep-going: %d failing plans, classes %v", len(first), classes(first), len(all), got)
}
