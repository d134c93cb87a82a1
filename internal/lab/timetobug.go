package lab

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/fakeapi/fakeapibench"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// TimeToBugOptions configures TimeToBug.
type TimeToBugOptions struct {
	// Seeds are the campaigns' first generator seeds, one campaign per
	// seed (random plans Seed, Seed+1, ... as cachelab run --random draws
	// them).
	Seeds []uint64
	// Max bounds each campaign's plans: a bug not found in Max plans is
	// reported as not found.
	Max int
	// OnCampaign, optional, is called after each campaign (for progress).
	OnCampaign func(subject string, c Campaign)
}

// Campaign is one campaign of random plans against one subject: how many
// plans it ran to the first failure, and the CPU they took.
type Campaign struct {
	// Seed is the first plan's generator seed.
	Seed uint64
	// Plans is the number of plans run up to and including the first
	// failing one (Max when none failed).
	Plans int
	// CPU is the process CPU time those plans took (user and system;
	// the runs are sequential, so it is theirs, plus the garbage
	// collector's share).
	CPU time.Duration
	// Found is false when no plan of the campaign failed.
	Found bool
	// Failed are the invariants the first failing plan failed.
	Failed []string
	// Plan is the first failing plan's run ID.
	Plan string
}

// TimeToBugRow is one subject's campaigns.
type TimeToBugRow struct {
	// Subject is the subject (a mutant: a planted, documented bug).
	Subject string
	// Source is the upstream issue or PR the bug comes from, if any.
	Source string
	// Campaigns are its campaigns, one per seed.
	Campaigns []Campaign
}

// TimeToBug runs, for each subject and each seed, random plans one at a
// time until the first that fails an invariant (measurements apart, as
// cachelab run --random counts failures) or opt.Max plans, and returns
// plans and CPU to that failure. The runs are sequential so that each
// campaign's CPU is its own.
func TimeToBug(host Host, subjects []string, opt TimeToBugOptions) ([]TimeToBugRow, error) {
	if opt.Max < 1 {
		return nil, fmt.Errorf("time to bug: the plan bound must be 1 or more, got %d", opt.Max)
	}
	if len(opt.Seeds) == 0 {
		return nil, fmt.Errorf("time to bug: no seed")
	}
	var rows []TimeToBugRow
	for _, s := range subjects {
		info, ok := sim.LookupSubject(s)
		if !ok {
			return nil, fmt.Errorf("time to bug: unknown subject %q (see cachelab list)", s)
		}
		rows = append(rows, TimeToBugRow{Subject: s, Source: info.Source})
	}
	ok, out := host(func(t *testing.T) {
		// One run first, unmeasured: the process's one-time set-up
		// (client-go's schemes, the subjects' first allocations) is no
		// campaign's cost.
		warm := scenarios.Random(0, rows[0].Subject)
		job := NewJob(&warm, nil)
		t.Run("warm-up", func(t *testing.T) { runOne(t, job, nil) })
		for i := range rows {
			for _, seed := range opt.Seeds {
				c := campaign(t, rows[i].Subject, seed, opt.Max)
				rows[i].Campaigns = append(rows[i].Campaigns, c)
				if opt.OnCampaign != nil {
					opt.OnCampaign(rows[i].Subject, c)
				}
			}
		}
	})
	if !ok && strings.TrimSpace(out) != "" {
		return rows, fmt.Errorf("time to bug: the host reported a failure:\n%s", out)
	}
	return rows, nil
}

// campaign runs subject's random plans from seed until the first failure.
func campaign(t *testing.T, subject string, seed uint64, max int) Campaign {
	c := Campaign{Seed: seed, Plans: max}
	var cpu time.Duration
	for i := 0; i < max; i++ {
		p := scenarios.Random(seed+uint64(i), subject)
		job := NewJob(&p, nil)
		var r *Result
		before := fakeapibench.ProcessCPU()
		t.Run(job.ID, func(t *testing.T) { r = runOne(t, job, nil) })
		cpu += fakeapibench.ProcessCPU() - before
		if r == nil {
			continue
		}
		if f := r.Failures(); len(f) > 0 {
			c.Plans, c.Found, c.Plan = i+1, true, job.ID
			for _, v := range f {
				c.Failed = append(c.Failed, v.Invariant)
			}
			break
		}
	}
	c.CPU = cpu
	return c
}

// WriteTimeToBug writes rows as a Markdown table: per subject, plans and
// CPU to the first failure, median and max over its campaigns, how many
// campaigns found it, and the invariants that failed first.
func WriteTimeToBug(w io.Writer, rows []TimeToBugRow, max int) {
	fmt.Fprintln(w, "| planted bug | found | plans to first failure (median / max) | CPU to first failure (median / max) | failed first | source |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		var plans []int
		var cpus []time.Duration
		found := 0
		inv := map[string]int{}
		for _, c := range r.Campaigns {
			plans = append(plans, c.Plans)
			cpus = append(cpus, c.CPU)
			if c.Found {
				found++
				for _, f := range c.Failed {
					inv[f]++
				}
			}
		}
		maxPlans := fmt.Sprint(slices.Max(plans))
		if found < len(r.Campaigns) {
			maxPlans = fmt.Sprintf("> %d", max)
		}
		var names []string
		for k := range inv {
			names = append(names, k)
		}
		slices.SortFunc(names, func(a, b string) int {
			if inv[a] != inv[b] {
				return inv[b] - inv[a]
			}
			return strings.Compare(a, b)
		})
		src := r.Source
		if src == "" {
			src = "-"
		}
		fmt.Fprintf(w, "| %s | %d/%d | %d / %s | %s / %s | %s | %s |\n", r.Subject, found, len(r.Campaigns),
			median(plans), maxPlans, roundCPU(median(cpus)), roundCPU(slices.Max(cpus)), strings.Join(names, ", "), src)
	}
}

// median is the middle value of xs (the upper one of an even count).
func median[T cmp.Ordered](xs []T) T {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// roundCPU rounds d for the table.
func roundCPU(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}
