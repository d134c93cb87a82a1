package lab

import (
	"fmt"
	"testing"

	"github.com/cachelab/cachelab/sim"
)

func TestShardsPartitionEveryCampaign(t *testing.T) {
	for total := range 12 {
		var jobs []Job
		for k := range total {
			jobs = append(jobs, NewJob(&sim.Plan{Name: fmt.Sprintf("p%d", k), Subject: "s"}, nil))
		}
		for n := 1; n <= 5; n++ {
			seen := map[string]int{}
			for i := range n {
				s, err := ParseShard(fmt.Sprintf("%d/%d", i, n))
				if err != nil {
					t.Fatal(err)
				}
				part := s.Jobs(jobs)
				if len(part) < total/n || len(part) > total/n+1 {
					t.Errorf("%d jobs, shard %s: %d jobs, want %d or %d", total, s, len(part), total/n, total/n+1)
				}
				for _, j := range part {
					seen[j.ID]++
				}
			}
			for _, j := range jobs {
				if seen[j.ID] != 1 {
					t.Errorf("%d jobs in %d shards: %s is in %d shards, want 1", total, n, j.ID, seen[j.ID])
				}
			}
		}
	}
	if got := (Shard{}).Jobs(make([]Job, 3)); len(got) != 3 {
		t.Errorf("the zero Shard ran %d of 3 jobs", len(got))
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if s, ok, err := ShardFromEnv(env(nil)); ok || err != nil || s.Sharded() {
		t.Errorf("no environment: %v %v %v", s, ok, err)
	}
	if s, ok, err := ShardFromEnv(env(map[string]string{EnvJobIndex: "3", EnvShardCount: "4"})); !ok || err != nil || s != (Shard{3, 4}) {
		t.Errorf("JOB_COMPLETION_INDEX=3 of 4: %v %v %v", s, ok, err)
	}
	if _, _, err := ShardFromEnv(env(map[string]string{EnvJobIndex: "4", EnvShardCount: "4"})); err == nil {
		t.Errorf("JOB_COMPLETION_INDEX=4 of 4 accepted")
	}
}
