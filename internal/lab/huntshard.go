package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// shardPlans returns shard s's part of a campaign's ordered plans (the
// plans whose 1-based index k has (k-1) mod Count == Index, as Shard.Jobs
// deals runs), their workloads, and each one's 1-based index in the whole
// campaign; the whole campaign for the zero Shard.
func shardPlans(s Shard, ts []scenarios.Targeted, of []int) ([]scenarios.Targeted, []int, []int) {
	var t2 []scenarios.Targeted
	var of2, index []int
	for k := range ts {
		if s.Holds(k) {
			t2, of2, index = append(t2, ts[k]), append(of2, of[k]), append(index, k+1)
		}
	}
	return t2, of2, index
}

// HuntDigest is the sha256, in hex, of a campaign's ordered plan list: each
// plan's class, perturbation and plan (as JSON), in order. Two processes
// that generated the same plans in the same order have the same digest; a
// reference run whose order differs (client-go's map order in a WatchList
// of several objects) can generate other plans from the same seed, and
// then the digests differ.
func HuntDigest(ts []scenarios.Targeted) string {
	h := sha256.New()
	for _, t := range ts {
		b, err := json.Marshal(&t.Plan)
		if err != nil {
			// A plan that cannot be written has no stable form: its
			// error's text stands in for it (no two shards agree by
			// accident on an empty digest).
			b = []byte("unmarshalable plan: " + err.Error())
		}
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", t.Class, t.Perturbation, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ShortDigest is a digest's first 12 hex digits, as tables print it.
func ShortDigest(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// HuntFile is a campaign's (or a shard's) machine-readable record, in its
// output folder: what MergeHunt reads.
const HuntFile = "hunt.json"

// huntVersion is hunt.json's format version.
const huntVersion = 1

type huntDoc struct {
	Version int    `json:"version"`
	Subject string `json:"subject"`
	// Shard is "i/n", "" for a whole campaign.
	Shard string `json:"shard,omitempty"`
	// CampaignPlans is how many plans the whole campaign generated,
	// ShardPlans how many of them this shard holds, Digest the whole
	// list's HuntDigest.
	CampaignPlans int    `json:"campaignPlans"`
	ShardPlans    int    `json:"shardPlans"`
	Digest        string `json:"digest"`
	StopAtFirst   bool   `json:"stopAtFirst,omitempty"`
	// ReferenceRuns, JudgingRuns and CPU are this shard's (the references
	// run in every shard).
	ReferenceRuns int                `json:"referenceRuns"`
	JudgingRuns   int                `json:"judgingRuns"`
	CPU           time.Duration      `json:"cpuNanos"`
	References    []huntRefDoc       `json:"references"`
	Lifecycle     []string           `json:"lifecycle,omitempty"`
	Pruned        []scenarios.Pruned `json:"pruned,omitempty"`
	Rows          []huntRowDoc       `json:"rows"`
}

type huntRefDoc struct {
	Name     string               `json:"name"`
	Error    string               `json:"error,omitempty"`
	Verdicts []invariants.Verdict `json:"verdicts,omitempty"`
}

type huntRowDoc struct {
	Index        int           `json:"index"`
	Class        string        `json:"class"`
	Perturbation string        `json:"perturbation"`
	Verdict      string        `json:"verdict"`
	Failed       []string      `json:"failed,omitempty"`
	Error        string        `json:"error,omitempty"`
	Reasons      []string      `json:"reasons,omitempty"`
	Plan         *sim.Plan     `json:"plan"`
	Minimal      *sim.Plan     `json:"minimal,omitempty"`
	Dir          string        `json:"dir,omitempty"` // relative to the folder of hunt.json
	Replay       string        `json:"replay,omitempty"`
	CPU          time.Duration `json:"cpuNanos"`
}

// WriteHunt writes out/hunt.json: the campaign's (or shard's) subject,
// shard, plan counts, plans digest and rows (index, class, perturbation,
// verdict, failed invariants, plan, shrunk plan, replay command, CPU), for
// MergeHunt.
func WriteHunt(out string, rep *HuntReport) error {
	doc := huntDoc{Version: huntVersion, Subject: rep.Subject, Shard: rep.Shard.String(), CampaignPlans: rep.Generated,
		ShardPlans: rep.ShardPlans, Digest: rep.Digest, StopAtFirst: rep.StopAtFirst, ReferenceRuns: rep.ReferenceRuns,
		JudgingRuns: rep.JudgingRuns, CPU: rep.CPU, Lifecycle: rep.Lifecycle, Pruned: rep.Pruned, Rows: []huntRowDoc{}}
	for _, r := range rep.References {
		d := huntRefDoc{Verdicts: r.Verdicts}
		if r.Job.Plan != nil {
			d.Name = r.Job.Plan.Name
		}
		if r.Err != nil {
			d.Error = r.Err.Error()
		}
		doc.References = append(doc.References, d)
	}
	for _, r := range rep.Rows {
		d := huntRowDoc{Index: r.Index, Class: r.Class, Perturbation: r.Perturbation, Verdict: r.Verdict, Failed: r.Failed,
			Error: r.Err, Reasons: r.Reasons, Plan: r.Plan, Minimal: r.Minimal, Replay: r.Replay, CPU: r.CPU}
		if r.Dir != "" {
			if rel, err := filepath.Rel(out, r.Dir); err == nil {
				d.Dir = filepath.ToSlash(rel)
			} else {
				d.Dir = r.Dir
			}
		}
		doc.Rows = append(doc.Rows, d)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, HuntFile), append(b, '\n'), 0o644)
}

// IsHuntFolder reports whether dir holds a hunt.json (the --out folder of a
// `cachelab hunt`), not a run's results.json.
func IsHuntFolder(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, HuntFile))
	return err == nil
}

// HuntMerge says how MergeHunt joined a campaign's shards.
type HuntMerge struct {
	// Shards is how many shards were merged; Plans the campaign's plan
	// count and Digest its plans digest, the same in every shard.
	Shards int
	Plans  int
	Digest string
	// Missing is set when shards stopped at their first failure
	// (StopAtFirst): how many of the campaign's plans no shard ran (all
	// after the campaign's first failure).
	Missing int
}

// MergeHunt reads the hunt.json of each folder in dirs (the --out folders
// of a campaign's shards) and returns the whole campaign's report, its
// rows in the campaign's order, each Dir pointing into its shard's folder.
// It fails, saying why, unless the folders are the shards 0..n-1 of one
// campaign, each once, that generated the same plans (the same digest:
// shards whose plans differ are never merged) and together ran each plan
// once; when shards stopped at their first failure, every plan before the
// campaign's first failure must have been run. The merged report's
// ReferenceRuns, JudgingRuns and CPU are the shards' sums (each shard ran
// the references); its References, Pruned and Lifecycle are the first
// shard's (every shard generated them alike).
func MergeHunt(dirs []string) (*HuntReport, *HuntMerge, error) {
	if len(dirs) == 0 {
		return nil, nil, errors.New("give the output folders of a hunt's shards")
	}
	type shardDoc struct {
		dir   string
		shard Shard
		doc   huntDoc
	}
	var docs []shardDoc
	seen := map[int]string{}
	for _, dir := range dirs {
		path := filepath.Join(dir, HuntFile)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (give a folder written by `cachelab hunt --out DIR`)", dir, err)
		}
		var doc huntDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, nil, fmt.Errorf("%s: not a hunt file: %v", path, err)
		}
		if doc.Version != huntVersion {
			return nil, nil, fmt.Errorf("%s: format version %d, this cachelab reads %d", path, doc.Version, huntVersion)
		}
		s := Shard{Index: 0, Count: 1}
		if doc.Shard != "" {
			if s, err = ParseShard(doc.Shard); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		if len(docs) > 0 {
			first := docs[0]
			if doc.Subject != first.doc.Subject || s.Count != first.shard.Count {
				return nil, nil, fmt.Errorf("%s is shard %s of a hunt of %s, %s is shard %s of a hunt of %s: not the same campaign",
					dir, s, doc.Subject, first.dir, first.shard, first.doc.Subject)
			}
		}
		if prev, dup := seen[s.Index]; dup {
			return nil, nil, fmt.Errorf("%s and %s are both shard %s", prev, dir, s)
		}
		seen[s.Index] = dir
		docs = append(docs, shardDoc{dir, s, doc})
	}
	count := docs[0].shard.Count
	var missing []string
	for i := range count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("missing shards %s of the hunt of %s", strings.Join(missing, ", "), docs[0].doc.Subject)
	}
	// The shards must have generated the same plans, in the same order.
	type key struct {
		digest string
		plans  int
	}
	var keys []key
	byKey := map[key][]string{}
	for _, d := range docs {
		k := key{d.doc.Digest, d.doc.CampaignPlans}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], fmt.Sprintf("%s (%s)", d.shard, d.dir))
	}
	if len(keys) > 1 {
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s generated %d plans (digest %s)", strings.Join(byKey[k], ", "), k.plans, ShortDigest(k.digest)))
		}
		return nil, nil, fmt.Errorf("the shards disagree on the campaign's plans, not merged: %s. Their plans differ: a reference run's order is partly client-go's (map order in a WatchList of several objects), so processes can generate other plans from one seed; run the shards again (their rows are not comparable)",
			strings.Join(parts, "; "))
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].shard.Index < docs[j].shard.Index })
	d0 := docs[0].doc
	rep := &HuntReport{Subject: d0.Subject, Generated: d0.CampaignPlans, ShardPlans: d0.CampaignPlans, Digest: d0.Digest,
		Pruned: d0.Pruned, Lifecycle: d0.Lifecycle}
	for _, r := range d0.References {
		res := &Result{Job: Job{ID: r.Name, Plan: &sim.Plan{Name: r.Name}}, Verdicts: r.Verdicts}
		if r.Error != "" {
			res.Err = errors.New(r.Error)
		}
		rep.References = append(rep.References, res)
	}
	ran := map[int]string{}
	refRows := map[string]bool{}
	stopped := false
	for _, d := range docs {
		rep.ReferenceRuns += d.doc.ReferenceRuns
		rep.JudgingRuns += d.doc.JudgingRuns
		rep.CPU += d.doc.CPU
		stopped = stopped || d.doc.StopAtFirst
		for _, r := range d.doc.Rows {
			if r.Plan == nil {
				return nil, nil, fmt.Errorf("%s: row %d has no plan", d.dir, r.Index)
			}
			if r.Class == ClassReference {
				// Every shard runs the references: one row of a reference
				// that fails alone, whichever shard wrote it.
				if refRows[r.Plan.Name] {
					continue
				}
				refRows[r.Plan.Name] = true
			} else {
				if r.Index < 1 || r.Index > d0.CampaignPlans || (r.Index-1)%count != d.shard.Index {
					return nil, nil, fmt.Errorf("%s: row %d is not a plan of shard %s of %d plans", d.dir, r.Index, d.shard, d0.CampaignPlans)
				}
				if prev, dup := ran[r.Index]; dup {
					return nil, nil, fmt.Errorf("plan %d is in both %s and %s: the shards overlap", r.Index, prev, d.dir)
				}
				ran[r.Index] = d.dir
			}
			row := HuntRow{Index: r.Index, Class: r.Class, Perturbation: r.Perturbation, Verdict: r.Verdict, Failed: r.Failed,
				Err: r.Error, Reasons: r.Reasons, Plan: r.Plan, Minimal: r.Minimal, Replay: r.Replay, CPU: r.CPU}
			if r.Dir != "" {
				row.Dir = filepath.Join(d.dir, filepath.FromSlash(r.Dir))
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	slices.SortStableFunc(rep.Rows, func(a, b HuntRow) int { return a.Index - b.Index })
	rep.StopAtFirst = stopped
	m := &HuntMerge{Shards: count, Plans: d0.CampaignPlans, Digest: d0.Digest}
	// Every plan must have run, or, when shards stopped at their first
	// failure, every plan before the campaign's first failure (each shard
	// runs its plans in the campaign's order, so the lowest failing index
	// of any shard is the campaign's first failure).
	upTo := d0.CampaignPlans
	if stopped {
		if f := rep.First(); f != nil {
			upTo = f.Index - 1
		}
	}
	var lost []string
	for k := 1; k <= upTo; k++ {
		if _, ok := ran[k]; !ok {
			lost = append(lost, fmt.Sprint(k))
		}
	}
	if len(lost) > 0 {
		if len(lost) > 10 {
			lost = append(lost[:10], "...")
		}
		return nil, nil, fmt.Errorf("the shards hold %d of the campaign's %d plans; not run: %s", len(ran), d0.CampaignPlans, strings.Join(lost, ", "))
	}
	m.Missing = d0.CampaignPlans - len(ran)
	return rep, m, nil
}
