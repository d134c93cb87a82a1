package store

import (
	"fmt"
	"strings"
	"testing"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"pgregory.net/rapid"
)

// labelsOf draws label maps from keys and values of which some are
// invalid (a leading dash, a bad prefix, too long, a space).
func labelsOf(t *rapid.T) map[string]string {
	keys := []string{"app", "tier", "example.com/owner", "a.b/c_d", "-bad", "bad/", "Bad Key", "x/" + strings.Repeat("k", 64), strings.Repeat("k", 63)}
	values := []string{"", "bench", "v1.2", "a_b-c", "-dash", "sp ace", strings.Repeat("v", 63), strings.Repeat("v", 64)}
	n := rapid.IntRange(0, 4).Draw(t, "n")
	m := map[string]string{}
	for i := range n {
		m[rapid.SampledFrom(keys).Draw(t, fmt.Sprintf("key%d", i))] = rapid.SampledFrom(values).Draw(t, fmt.Sprintf("value%d", i))
	}
	return m
}

// labelsValid answers as ValidateLabels does, on a first sight of a map and
// on every later one (from the memo), whatever maps came before.
func TestLabelsValidAnswersAsValidateLabels(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		for i := range rapid.IntRange(1, 6).Draw(t, "maps") {
			m := labelsOf(t)
			want := len(metav1validation.ValidateLabels(m, labelsPath)) == 0
			for try := range 2 {
				if got := labelsValid(m); got != want {
					t.Fatalf("map %d %v, try %d: labelsValid %v, ValidateLabels says valid=%v", i, m, try, got, want)
				}
			}
		}
	})
}

// Past its bound the memo starts again, and still answers right.
func TestLabelsValidPastItsBound(t *testing.T) {
	for i := range maxValidLabels + 10 {
		if !labelsValid(map[string]string{fmt.Sprintf("k%d", i): "v"}) {
			t.Fatalf("k%d=v found invalid", i)
		}
	}
	validLabels.Lock()
	n := len(validLabels.m)
	validLabels.Unlock()
	if n > maxValidLabels {
		t.Errorf("memo holds %d pairs, bound %d", n, maxValidLabels)
	}
	if labelsValid(map[string]string{"k1": "v", "-bad": "v"}) {
		t.Error("a map with an invalid key passed")
	}
	if !labelsValid(map[string]string{"k1": "v", "k2": "v"}) {
		t.Error("a valid map failed")
	}
}
