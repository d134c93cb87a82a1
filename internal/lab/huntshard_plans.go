package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cachelab/cachelab/scenarios"
	"github.com/cachelab/cachelab/sim"
)

// PlansFile is the file a campaign's ordered plans are written to
// (WritePlanList) and read from (LoadPlanList).
const PlansFile = "plans.json"

// planListVersion is plans.json's format version.
const planListVersion = 1

// HuntPlanList is a campaign's targeted plans, generated and ordered once
// (HuntOptions.GenerateOnly), for shards to run (HuntOptions.Plans): they
// then run the same plans whatever order their own reference runs saw.
type HuntPlanList struct {
	Version int    `json:"version"`
	Subject string `json:"subject"`
	// Digest is the plans' HuntDigest.
	Digest string `json:"digest"`
	// DeriveLifecycle is the campaign's HuntOptions.DeriveLifecycle (the
	// derived workload is part of its references).
	DeriveLifecycle bool `json:"deriveLifecycle,omitempty"`
	// Workloads are the campaign's workloads, as given to HuntPlans.
	Workloads []*sim.Plan `json:"workloads"`
	// References are the sha256 of each reference plan the campaign ran
	// (the workloads' fault-free plans, a derived lifecycle workload's,
	// a workload's again without its failing steps), in order: a shard
	// whose references differ would judge against other runs.
	References []string `json:"references"`
	// Plans are the targeted plans in the campaign's order.
	Plans []HuntPlan `json:"plans"`
}

// HuntPlan is one targeted plan of a HuntPlanList: scenarios.Targeted and
// the index of its workload's reference (HuntPlanList.References).
type HuntPlan struct {
	Class        string    `json:"class"`
	Perturbation string    `json:"perturbation"`
	Kind         string    `json:"kind,omitempty"`
	Target       string    `json:"target,omitempty"`
	Repair       bool      `json:"repair,omitempty"`
	Duplicates   bool      `json:"duplicates,omitempty"`
	Workload     int       `json:"workload"`
	Plan         *sim.Plan `json:"plan"`
}

// planDigest is the sha256 of p as JSON.
func planDigest(p *sim.Plan) string {
	b, err := json.Marshal(p)
	if err != nil {
		b = []byte("unmarshalable plan: " + err.Error())
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// newPlanList is the list of a campaign's ordered plans ts (of: their
// reference's index in refJobs).
func newPlanList(rep *HuntReport, workloads []*sim.Plan, opt HuntOptions, refJobs []Job, ts []scenarios.Targeted, of []int) *HuntPlanList {
	l := &HuntPlanList{Version: planListVersion, Subject: rep.Subject, Digest: rep.Digest, DeriveLifecycle: opt.DeriveLifecycle,
		Workloads: workloads, References: []string{}, Plans: []HuntPlan{}}
	for _, j := range refJobs {
		l.References = append(l.References, planDigest(j.Plan))
	}
	for i, t := range ts {
		p := t.Plan
		l.Plans = append(l.Plans, HuntPlan{Class: t.Class, Perturbation: t.Perturbation, Kind: t.Kind, Target: t.Target,
			Repair: t.Repair, Duplicates: t.Duplicates, Workload: of[i], Plan: &p})
	}
	return l
}

// use returns the list's plans and their references' indexes, after
// checking that refJobs (this process's references) are the list's and
// that the plans are those the list's digest names.
func (l *HuntPlanList) use(refJobs []Job) ([]scenarios.Targeted, []int, error) {
	if len(refJobs) != len(l.References) {
		return nil, nil, fmt.Errorf("hunt: the plans list was made from %d reference runs, this campaign ran %d: give the list's workloads (and its derive-lifecycle)", len(l.References), len(refJobs))
	}
	for i, j := range refJobs {
		if d := planDigest(j.Plan); d != l.References[i] {
			return nil, nil, fmt.Errorf("hunt: reference %d (%s) is not the one the plans list was made from (plan digest %s, the list's %s): its plans would be judged against another run",
				i+1, j.Plan.Name, ShortDigest(d), ShortDigest(l.References[i]))
		}
	}
	var ts []scenarios.Targeted
	var of []int
	for k, p := range l.Plans {
		if p.Plan == nil || p.Workload < 0 || p.Workload >= len(refJobs) {
			return nil, nil, fmt.Errorf("hunt: the plans list's plan %d has no plan or no reference (workload %d of %d)", k+1, p.Workload, len(refJobs))
		}
		ts = append(ts, scenarios.Targeted{Class: p.Class, Perturbation: p.Perturbation, Kind: p.Kind, Target: p.Target,
			Repair: p.Repair, Duplicates: p.Duplicates, Plan: *p.Plan.Clone()})
		of = append(of, p.Workload)
	}
	if d := HuntDigest(ts); d != l.Digest {
		return nil, nil, fmt.Errorf("hunt: the plans list's plans have digest %s, the list says %s: the file was changed", ShortDigest(d), ShortDigest(l.Digest))
	}
	return ts, of, nil
}

// WritePlanList writes l to dir/plans.json.
func WritePlanList(dir string, l *HuntPlanList) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, PlansFile), append(b, '\n'), 0o644)
}

// LoadPlanList reads a campaign's plans list: path is its plans.json or
// the folder holding it.
func LoadPlanList(path string) (*HuntPlanList, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, PlansFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (give the folder written by `cachelab hunt --plans-out DIR`)", err)
	}
	var l HuntPlanList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%s: not a plans list: %v", path, err)
	}
	if l.Version != planListVersion {
		return nil, fmt.Errorf("%s: format version %d, this cachelab reads %d", path, l.Version, planListVersion)
	}
	if len(l.Workloads) == 0 || l.Subject == "" {
		return nil, errors.New(path + ": a plans list without subject or workloads")
	}
	for i, w := range l.Workloads {
		if w == nil {
			return nil, fmt.Errorf("%s: workload %d is empty", path, i+1)
		}
		if l.Workloads[i], err = compactPlan(w); err != nil {
			return nil, fmt.Errorf("%s: workload %d: %w", path, i+1, err)
		}
	}
	for k, p := range l.Plans {
		if p.Plan == nil {
			continue // use says so
		}
		if l.Plans[k].Plan, err = compactPlan(p.Plan); err != nil {
			return nil, fmt.Errorf("%s: plan %d: %w", path, k+1, err)
		}
	}
	return &l, nil
}

// compactPlan is p with its raw JSON (objects, patches) compacted: read
// from an indented file, a step's patch keeps the indentation of its
// depth, and a targeted plan's step then differs from its workload's
// (reflect.DeepEqual), so that each plan would be judged against a
// reference run of its own instead of the workload's.
func compactPlan(p *sim.Plan) (*sim.Plan, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var q sim.Plan
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, err
	}
	return &q, nil
}
