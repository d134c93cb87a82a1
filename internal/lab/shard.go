package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// Shard is one part of a campaign split across processes or machines:
// shard Index of Count (0 <= Index < Count), as a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX numbers its pods. The zero Shard (Count 0) is the
// whole campaign.
type Shard struct {
	Index, Count int
}

// Sharded reports whether s is a part of a campaign, not the whole.
func (s Shard) Sharded() bool { return s.Count > 0 }

// String is "i/n", or "" for the whole campaign.
func (s Shard) String() string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ParseShard parses "i/n": shard i (counted from 0) of n.
func ParseShard(text string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(text), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want i/n, shard i (counted from 0) of n, as 0/4", text)
	}
	return checkShard(i, n, fmt.Sprintf("shard %q", text))
}

func checkShard(i, n int, what string) (Shard, error) {
	if n < 1 {
		return Shard{}, fmt.Errorf("%s: the number of shards must be 1 or more, got %d", what, n)
	}
	if i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%s: the shard index must be from 0 to %d (counted from 0), got %d", what, n-1, i)
	}
	return Shard{Index: i, Count: n}, nil
}

// Environment variables read by ShardFromEnv.
const (
	// EnvJobIndex is set by Kubernetes on each pod of an Indexed Job.
	EnvJobIndex = "JOB_COMPLETION_INDEX"
	// EnvShardCount is the number of shards (the Job's completions);
	// Kubernetes does not set it: the Job's manifest does.
	EnvShardCount = "CACHELAB_SHARDS"
)

// ShardFromEnv returns the shard named by the environment as a
// Kubernetes Indexed Job sets it (JOB_COMPLETION_INDEX, with CACHELAB_SHARDS
// the total); ok is false when JOB_COMPLETION_INDEX is unset.
func ShardFromEnv(getenv func(string) string) (s Shard, ok bool, err error) {
	idx := getenv(EnvJobIndex)
	if idx == "" {
		return Shard{}, false, nil
	}
	total := getenv(EnvShardCount)
	i, err := strconv.Atoi(idx)
	if err != nil {
		return Shard{}, true, fmt.Errorf("%s=%q: want a number", EnvJobIndex, idx)
	}
	if total == "" {
		return Shard{}, true, fmt.Errorf("%s=%s is set but %s (the number of shards, the Job's completions) is not", EnvJobIndex, idx, EnvShardCount)
	}
	n, err := strconv.Atoi(total)
	if err != nil {
		return Shard{}, true, fmt.Errorf("%s=%q: want a number", EnvShardCount, total)
	}
	s, err = checkShard(i, n, fmt.Sprintf("%s=%s of %s=%s", EnvJobIndex, idx, EnvShardCount, total))
	return s, true, err
}

// Jobs returns shard s's part of a campaign's jobs: every job whose
// position k in jobs has k mod Count == Index (round robin, so that slow
// and fast runs spread evenly). The shards of one campaign partition it.
// The whole campaign for the zero Shard.
func (s Shard) Jobs(jobs []Job) []Job {
	if !s.Sharded() {
		return jobs
	}
	var out []Job
	for k, j := range jobs {
		if s.Holds(k) {
			out = append(out, j)
		}
	}
	return out
}

// Holds reports whether the item at 0-based position k of a campaign is
// shard s's (k mod Count == Index, round robin); every item is the zero
// Shard's.
func (s Shard) Holds(k int) bool { return !s.Sharded() || k%s.Count == s.Index }

// ResultsFile is the machine-readable record of a batch, in its output
// folder: what `cachelab merge` reads to rebuild the results of shards.
const ResultsFile = "results.json"

// resultsVersion is results.json's format version.
const resultsVersion = 1

type resultsDoc struct {
	Version int    `json:"version"`
	Title   string `json:"title"`
	// Shard is "i/n", "" for a whole campaign.
	Shard string `json:"shard,omitempty"`
	// CampaignRuns is how many runs the whole campaign has (every shard).
	CampaignRuns int         `json:"campaignRuns"`
	Runs         []resultDoc `json:"runs"`
}

type resultDoc struct {
	ID           string               `json:"id"`
	Plan         *sim.Plan            `json:"plan"`
	Scenario     string               `json:"scenario,omitempty"`
	ScenarioFile string               `json:"scenarioFile,omitempty"`
	Dir          string               `json:"dir,omitempty"` // relative to the batch folder
	Verdicts     []invariants.Verdict `json:"verdicts"`
	Mismatches   []scenarios.Mismatch `json:"mismatches,omitempty"`
	Error        string               `json:"error,omitempty"`
	WriteError   string               `json:"writeError,omitempty"`
	End          sim.Duration         `json:"end"`
	Outcome      string               `json:"outcome"`
	Records      int                  `json:"records"`
	Wall         time.Duration        `json:"wallNanos"`
}

// WriteResults writes out/results.json: title, shard (zero for a whole
// campaign), the number of runs of the whole campaign, and each result's
// job, verdicts and summary, for MergeResults.
func WriteResults(out, title string, shard Shard, campaignRuns int, results []*Result) error {
	doc := resultsDoc{Version: resultsVersion, Title: title, Shard: shard.String(), CampaignRuns: campaignRuns, Runs: []resultDoc{}}
	for _, r := range results {
		d := resultDoc{ID: r.Job.ID, Plan: r.Job.Plan, Verdicts: r.Verdicts, Mismatches: r.Mismatches,
			End: r.End, Outcome: r.Outcome, Records: r.Records, Wall: r.Wall}
		if s := r.Job.Scenario; s != nil {
			d.Scenario, d.ScenarioFile = s.Name, s.File
		}
		if r.Err != nil {
			d.Error = r.Err.Error()
		}
		if r.WriteErr != nil {
			d.WriteError = r.WriteErr.Error()
		}
		if r.Dir != "" {
			if rel, err := filepath.Rel(out, r.Dir); err == nil {
				d.Dir = filepath.ToSlash(rel)
			}
		}
		doc.Runs = append(doc.Runs, d)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, ResultsFile), append(b, '\n'), 0o644)
}

// Merged is the campaign MergeResults rebuilt from its shards.
type Merged struct {
	// Title is the campaign's title, as each shard wrote it.
	Title string
	// Results are every shard's results, in natural order of their IDs.
	Results []*Result
	// Shards is how many shards were merged.
	Shards int
}

// MergeResults reads the results.json of each folder in dirs (the output
// folders of a campaign's shards) and returns the whole campaign's
// results, each Dir pointing into its shard's folder. It fails, saying
// why, unless the folders are the shards 0..n-1 of one campaign, each
// once, and together hold its runs, each once.
func MergeResults(dirs []string) (*Merged, error) {
	if len(dirs) == 0 {
		return nil, errors.New("give the output folders of a campaign's shards")
	}
	m := &Merged{}
	seenShard := map[int]string{}
	seenRun := map[string]string{}
	count, campaign := -1, -1
	for _, dir := range dirs {
		path := filepath.Join(dir, ResultsFile)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (give a folder written by `cachelab run --out DIR`)", dir, err)
		}
		var doc resultsDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: not a results file: %v", path, err)
		}
		if doc.Version != resultsVersion {
			return nil, fmt.Errorf("%s: format version %d, this cachelab reads %d", path, doc.Version, resultsVersion)
		}
		s := Shard{Index: 0, Count: 1}
		if doc.Shard != "" {
			if s, err = ParseShard(doc.Shard); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		if count == -1 {
			count, campaign, m.Title = s.Count, doc.CampaignRuns, doc.Title
		}
		if doc.Title != m.Title || s.Count != count || doc.CampaignRuns != campaign {
			return nil, fmt.Errorf("%s is shard %s of %q (%d runs), %s is of %q (%d shards, %d runs): not the same campaign", dir, doc.Shard, doc.Title, doc.CampaignRuns, dirs[0], m.Title, count, campaign)
		}
		if prev, dup := seenShard[s.Index]; dup {
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", prev, dir, s.Index, s.Count)
		}
		seenShard[s.Index] = dir
		for _, d := range doc.Runs {
			if prev, dup := seenRun[d.ID]; dup {
				return nil, fmt.Errorf("run %s is in both %s and %s: the shards overlap", d.ID, prev, dir)
			}
			seenRun[d.ID] = dir
			r, err := d.result(dir)
			if err != nil {
				return nil, fmt.Errorf("%s: run %s: %w", path, d.ID, err)
			}
			m.Results = append(m.Results, r)
		}
	}
	var missing []string
	for i := range count {
		if _, ok := seenShard[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing shards %s of the campaign %q", strings.Join(missing, ", "), m.Title)
	}
	if len(m.Results) != campaign {
		return nil, fmt.Errorf("the shards hold %d runs, the campaign %q has %d", len(m.Results), m.Title, campaign)
	}
	m.Shards = count
	sort.SliceStable(m.Results, func(i, j int) bool { return NaturalLess(m.Results[i].Job.ID, m.Results[j].Job.ID) })
	return m, nil
}

// result rebuilds a Result from its record in the results file of dir.
func (d resultDoc) result(dir string) (*Result, error) {
	if d.Plan == nil {
		return nil, errors.New("no plan")
	}
	r := &Result{Job: Job{ID: d.ID, Plan: d.Plan}, Verdicts: d.Verdicts, Mismatches: d.Mismatches,
		End: d.End, Outcome: d.Outcome, Records: d.Records, Wall: d.Wall}
	if d.Scenario != "" {
		s, err := scenarios.Get(d.Scenario)
		if err != nil || (d.ScenarioFile != "" && s.File != d.ScenarioFile) {
			if s, err = scenarios.LoadFile(d.ScenarioFile); err != nil {
				return nil, fmt.Errorf("its scenario %q (%s): %w", d.Scenario, d.ScenarioFile, err)
			}
		}
		r.Job.Scenario = s
	}
	if d.Error != "" {
		r.Err = errors.New(d.Error)
	}
	if d.WriteError != "" {
		r.WriteErr = errors.New(d.WriteError)
	}
	if d.Dir != "" {
		r.Dir = filepath.Join(dir, filepath.FromSlash(d.Dir))
	}
	return r, nil
}
