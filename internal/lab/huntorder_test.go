package lab

import (
	"slices"
	"testing"

	"github.com/cachelab/cachelab/scenarios"
)

// With a cost, a tier's plans of one kind and rank run cheapest first (a
// campaign gives each plan its workload's reference run's record count);
// which plans are repeats (the later tiers) stays as without it. Before,
// generation order decided within the kind: the first (largest) random
// workload's plans went first.
func TestHuntOrderRunsTheCheaperPlansOfAKindFirst(t *testing.T) {
	mk := func(name, kind, target string) scenarios.Targeted {
		return scenarios.Targeted{Class: scenarios.ClassUnobserved, Kind: kind, Target: target, Perturbation: name}
	}
	ts := []scenarios.Targeted{
		mk("A", scenarios.KindTombstone, "pods deleted by user"),         // workload 1 (900 records)
		mk("C", scenarios.KindDownAcross, "bellerophons patch by user"),  // workload 1
		mk("B", scenarios.KindTombstone, "configmaps deleted by user"),   // workload 2 (200)
		mk("D", scenarios.KindTombstone, "pods deleted by user"),         // workload 2: a repeat of A
		mk("E", scenarios.KindDownAcross, "bellerophons delete by user"), // workload 2
	}
	cost := []int{900, 900, 200, 200, 200}
	names := func(order []int) []string {
		var out []string
		for _, i := range order {
			out = append(out, ts[i].Perturbation)
		}
		return out
	}
	if got, want := names(huntOrder(ts, func(i int) int { return cost[i] })), []string{"B", "E", "A", "C", "D"}; !slices.Equal(got, want) {
		t.Errorf("with cost: order %v, want %v", got, want)
	}
	if got, want := names(HuntOrder(ts)), []string{"A", "C", "B", "E", "D"}; !slices.Equal(got, want) {
		t.Errorf("without cost: order %v, want %v", got, want)
	}
}
