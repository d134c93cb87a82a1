package image

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// readJob reads one of deploy/'s Job manifests strictly.
func readJob(t *testing.T, file string) *batchv1.Job {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(b, &j); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &j
}

// TestTheImageRunsAShardedCampaignAndItsMerge builds the image with no
// container daemon, loads it back from its tarball, unpacks its filesystem
// and runs, from that filesystem, what deploy/campaign-job.yaml and
// deploy/merge-job.yaml run: each shard as a process with the Indexed Job's
// environment (JOB_COMPLETION_INDEX, CACHELAB_SHARDS) and the manifest's
// arguments (the campaign cut to 9 plans, 3 shards), then the merge Job's
// command, with /results a temporary folder.
func TestTheImageRunsAShardedCampaignAndItsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cachelab and runs a campaign")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "cachelab")
	if err := BuildBinary("../..", bin); err != nil {
		t.Fatal(err)
	}
	built, err := Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(tmp, "image.tar")
	if err := Write(tarPath, Tag, built); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatalf("the written tarball is not an image: %v", err)
	}
	// The tarball is docker save's format: the manifest is rebuilt on
	// load, the image ID (its config's digest) is kept.
	d1, _ := built.ConfigName()
	d2, _ := img.ConfigName()
	if d1 != d2 {
		t.Errorf("image ID after the tarball round trip %s, built %s", d2, d1)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, []string{Binary}) || cf.Config.User != User || cf.Config.WorkingDir != WorkDir {
		t.Fatalf("image config: entrypoint %q, user %q, workdir %q; want [%s], %s, %s", cf.Config.Entrypoint, cf.Config.User, cf.Config.WorkingDir, Binary, User, WorkDir)
	}
	again, err := Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	if d3, _ := again.ConfigName(); d3 != d1 {
		t.Errorf("two builds of one binary: digests %s and %s, want one (fixed timestamps)", d1, d3)
	}

	rootfs := filepath.Join(tmp, "rootfs")
	if err := Extract(img, rootfs); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(rootfs, cf.Config.Entrypoint[0])
	results := filepath.Join(tmp, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	// inContainer maps the container's paths onto the test's folders.
	inContainer := func(s string) string { return strings.ReplaceAll(s, WorkDir, results) }

	campaign := readJob(t, "campaign-job.yaml")
	c := campaign.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 0 {
		t.Fatalf("the campaign Job overrides the entrypoint with %q: the image runs cachelab itself", c.Command)
	}
	const shards = 3
	for i := range shards {
		var args []string
		for _, a := range c.Args {
			a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", string(rune('0'+i)))
			if strings.HasPrefix(a, "--random=") {
				a = "--random=9"
			}
			args = append(args, inContainer(a))
		}
		env := []string{"JOB_COMPLETION_INDEX=" + string(rune('0'+i))}
		for _, e := range c.Env {
			if e.Name == "CACHELAB_SHARDS" {
				e.Value = string(rune('0' + shards))
			}
			env = append(env, e.Name+"="+e.Value)
		}
		cmd := exec.Command(entry, args...)
		cmd.Dir = results
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("shard %d (%s %s): %v\n%s", i, entry, strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "as expected") {
			t.Errorf("shard %d printed no summary:\n%s", i, out)
		}
	}

	merge := readJob(t, "merge-job.yaml").Spec.Template.Spec.Containers[0]
	if len(merge.Command) != 0 {
		t.Fatalf("the merge Job overrides the entrypoint with %q: the image has no shell", merge.Command)
	}
	var args []string
	for _, a := range merge.Args {
		args = append(args, inContainer(a))
	}
	cmd := exec.Command(entry, args...)
	cmd.Dir = results
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("merge (%s): %v\n%s", strings.Join(args, " "), err, out)
	}
	if !strings.Contains(string(out), "merged 9 runs") || !strings.Contains(string(out), "from 3 shards") {
		t.Errorf("merge printed:\n%s", out)
	}
	for _, f := range []string{"index.html", "junit.xml", "results.json"} {
		if _, err := os.Stat(filepath.Join(results, "merged", f)); err != nil {
			t.Errorf("merged campaign: %v", err)
		}
	}
}
