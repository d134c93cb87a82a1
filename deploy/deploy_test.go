package deploy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/cachelab/cachelab/fakeapi/serve"
	"github.com/cachelab/cachelab/internal/lab"
)

// readJob reads a Job manifest strictly: an unknown or misspelt field is
// an error, as kubectl's server-side field validation makes it.
func readJob(t *testing.T, file string) *batchv1.Job {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(b, &j); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &j
}

// shardConfig checks what the API server cannot: that the campaign Job
// runs cachelab's shards (Indexed, CACHELAB_SHARDS equal to completions,
// each pod writing a folder of its own).
func shardConfig(j *batchv1.Job) error {
	if j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
		return fmt.Errorf("completionMode must be Indexed: cachelab reads its shard from JOB_COMPLETION_INDEX")
	}
	if len(j.Spec.Template.Spec.Containers) != 1 {
		return fmt.Errorf("want one container, got %d", len(j.Spec.Template.Spec.Containers))
	}
	c := j.Spec.Template.Spec.Containers[0]
	shards := ""
	for _, e := range c.Env {
		if e.Name == lab.EnvShardCount {
			shards = e.Value
		}
	}
	if j.Spec.Completions == nil || shards != fmt.Sprint(*j.Spec.Completions) {
		return fmt.Errorf("%s=%q must equal spec.completions (%v): the shards would not partition the campaign", lab.EnvShardCount, shards, j.Spec.Completions)
	}
	if len(c.Args) == 0 || c.Args[0] != "run" {
		return fmt.Errorf("args must start with run, got %q", c.Args)
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool {
		return strings.HasPrefix(a, "--out=") && strings.Contains(a, "$("+lab.EnvJobIndex+")")
	}) {
		return fmt.Errorf("args %q: each shard needs a folder of its own: --out=/results/shard-$(%s)", c.Args, lab.EnvJobIndex)
	}
	return nil
}

// TestJobManifestsPassServerSideDryRunAgainstServe creates the Job
// manifests with dryRun=All against `cachelab serve` (batch/v1 Job
// defaulted and validated as kube-apiserver does), checks that nothing was
// stored, and that a broken manifest is refused: the check can fail.
func TestJobManifestsPassServerSideDryRunAgainstServe(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := serve.Serve(ctx, serve.Options{KubeconfigPath: filepath.Join(dir, "kubeconfig")})
	if err != nil {
		t.Fatal(err)
	}
	dryRunJobs(t, r.KubeconfigPath)
	if err := shardConfig(readJob(t, "campaign-job.yaml")); err != nil {
		t.Errorf("campaign-job.yaml: %v", err)
	}
	broken := readJob(t, "campaign-job.yaml")
	broken.Spec.Completions = new(int32)
	*broken.Spec.Completions = 3
	if err := shardConfig(broken); err == nil || !strings.Contains(err.Error(), "must equal spec.completions") {
		t.Errorf("completions 3 with CACHELAB_SHARDS 4: %v, want an error", err)
	}
}

// TestJobManifestsPassServerSideDryRunAgainstTheRealAPIServer does the
// same against a real kube-apiserver: CACHELAB_REALSERVER_KUBECONFIG names
// its kubeconfig (make real-apiserver-start writes one; its path is the
// KUBECONFIG in /tmp/realserver.env).
func TestJobManifestsPassServerSideDryRunAgainstTheRealAPIServer(t *testing.T) {
	kubeconfig := os.Getenv("CACHELAB_REALSERVER_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("set CACHELAB_REALSERVER_KUBECONFIG to a real kube-apiserver's kubeconfig (make real-apiserver-start)")
	}
	dryRunJobs(t, kubeconfig)
}

// dryRunJobs creates the Jobs with dryRun=All in
// namespace default of the server of kubeconfig, checks that nothing was
// stored, and that a Job with restartPolicy Always is refused as Invalid.
func dryRunJobs(t *testing.T, kubeconfig string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs := cs.BatchV1().Jobs("default")
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, f := range []string{"campaign-job.yaml", "merge-job.yaml"} {
		j := readJob(t, f)
		got, err := jobs.Create(ctx, j, dry)
		if err != nil {
			t.Errorf("%s: dry-run create refused: %v", f, err)
			continue
		}
		if got.Spec.Selector == nil || got.Spec.Template.Labels[batchv1.JobNameLabel] != j.Name {
			t.Errorf("%s: the dry run did not answer the Job as created (selector %v, labels %v)", f, got.Spec.Selector, got.Spec.Template.Labels)
		}
		if _, err := jobs.Get(ctx, j.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: after a dry run, get = %v, want NotFound", f, err)
		}
	}
	broken := readJob(t, "campaign-job.yaml")
	broken.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	if _, err := jobs.Create(ctx, broken, dry); !apierrors.IsInvalid(err) {
		t.Errorf("a Job with restartPolicy Always: err = %v, want Invalid", err)
	}
}
