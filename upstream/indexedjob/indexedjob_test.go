package indexedjob

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"
	"sigs.k8s.io/yaml"
)

// repoRoot is the cachelab repository, from this package's folder.
const repoRoot = "../.."

// readManifest reads one of deploy/'s manifests strictly into obj.
func readManifest(t *testing.T, file string, obj any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		t.Fatalf("deploy/%s: %v", file, err)
	}
}

// image is cachelab's image tarball, built once for the tests of this
// binary in a folder TestMain removes.
var (
	imageOnce sync.Once
	image     struct {
		dir, tar, msg string
		err           error
	}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cachelab-indexedjob-image")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	image.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// realServer returns a config for the real kube-apiserver: $KUBECONFIG,
// else the one make real-apiserver-start wrote in /tmp/realserver.env. The
// test is skipped unless CACHELAB_INDEXEDJOB_E2E=1 (make indexed-job-e2e).
func realServer(t *testing.T) *rest.Config {
	t.Helper()
	if os.Getenv("CACHELAB_INDEXEDJOB_E2E") != "1" {
		t.Skip("needs the real kube-apiserver: make indexed-job-e2e")
	}
	kc := os.Getenv("KUBECONFIG")
	if kc == "" {
		f, err := os.Open("/tmp/realserver.env")
		if err != nil {
			t.Fatalf("no KUBECONFIG and no /tmp/realserver.env: run make real-apiserver-start (%v)", err)
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "KUBECONFIG="); ok {
				kc = v
			}
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", kc, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg
}

// cluster is what a test runs on: the real API server, a namespace of its
// own with its default ServiceAccount, the real Job controller and the
// kubelet stand-in.
type cluster struct {
	client  kubernetes.Interface
	ns      string
	kubelet *Kubelet
	results string
}

// start builds and unpacks the image once per test, makes the namespace,
// and starts the Job controller (the one of kube-controller-manager,
// NewController with kube-controller-manager's 5 workers, as upstream/job
// runs it) and the kubelet stand-in; both stop with ctx.
func start(ctx context.Context, t *testing.T, disrupt func(*corev1.Pod) bool) *cluster {
	t.Helper()
	cfg := realServer(t)
	tmp := t.TempDir()
	t0 := time.Now()
	imageOnce.Do(func() {
		var root string
		if root, image.err = filepath.Abs(repoRoot); image.err != nil {
			return
		}
		image.tar = filepath.Join(image.dir, "image.tar")
		image.msg, image.err = BuildImage(root, image.tar)
	})
	if image.err != nil {
		t.Fatal(image.err)
	}
	img, err := LoadImage(image.tar, filepath.Join(tmp, "rootfs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image built (once per test binary) and unpacked in %v: %s", time.Since(t0).Round(time.Millisecond), image.msg)

	admin := kubernetes.NewForConfigOrDie(cfg)
	ns, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cachelab-indexedjob-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace on the real server: %v", err)
	}
	t.Cleanup(func() {
		// The Job controller has stopped, and the controller manager runs
		// no pvc-protection controller: take the job-tracking finalizer off
		// the Pods left and pvc-protection off the claim, or the namespace
		// would never go.
		bg := context.Background()
		unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
		pods, _ := admin.CoreV1().Pods(ns.Name).List(bg, metav1.ListOptions{})
		for _, p := range pods.Items {
			_, _ = admin.CoreV1().Pods(ns.Name).Patch(bg, p.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{})
		}
		pvcs, _ := admin.CoreV1().PersistentVolumeClaims(ns.Name).List(bg, metav1.ListOptions{})
		for _, p := range pvcs.Items {
			_, _ = admin.CoreV1().PersistentVolumeClaims(ns.Name).Patch(bg, p.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{})
		}
		_ = admin.CoreV1().Namespaces().Delete(bg, ns.Name, metav1.DeleteOptions{})
	})
	// ServiceAccount admission refuses Pods until the controller manager's
	// serviceaccount controller made the namespace's default account.
	if _, err := waitFor(ctx, admin.CoreV1().ServiceAccounts(ns.Name), &corev1.ServiceAccount{}, "default", func(o runtime.Object) bool { return o != nil }); err != nil {
		t.Fatal(err)
	}

	jc := rest.CopyConfig(cfg)
	jc.UserAgent = "job-controller"
	jobClient := kubernetes.NewForConfigOrDie(jc)
	f := informers.NewSharedInformerFactory(jobClient, 0)
	c, err := jobcontroller.NewController(ctx, jobClient, f.Core().V1().Pods(), f.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	go c.Run(ctx, 5)

	results := filepath.Join(tmp, "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	var pvc corev1.PersistentVolumeClaim
	readManifest(t, "results-pvc.yaml", &pvc)
	if _, err := admin.CoreV1().PersistentVolumeClaims(ns.Name).Create(ctx, &pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("deploy/results-pvc.yaml: %v", err)
	}
	k := &Kubelet{Client: admin, Namespace: ns.Name, Image: img, Claims: map[string]string{pvc.Name: results}, Disrupt: disrupt}
	if err := k.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return &cluster{client: admin, ns: ns.Name, kubelet: k, results: results}
}

// lister is the part of a typed client waitFor needs.
type lister[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// waitFor watches the object name (of objType's kind) until cond holds for
// it, without polling; it gives up after 5 minutes or when ctx ends.
func waitFor[L runtime.Object](ctx context.Context, c lister[L], objType runtime.Object, name string, cond func(runtime.Object) bool) (runtime.Object, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.Watch(ctx, o)
		},
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ev, err := watchtools.UntilWithSync(wctx, lw, objType, nil, func(e watch.Event) (bool, error) {
		return e.Type != watch.Deleted && cond(e.Object), nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %s: %v", name, err)
	}
	return ev.Object, nil
}

// finished reports a Job's Complete or Failed condition, "" if neither.
func finished(o runtime.Object) string {
	for _, c := range o.(*batchv1.Job).Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return string(c.Type)
		}
	}
	return ""
}

// runJob creates the Job and waits until it is complete or failed.
func (c *cluster) runJob(ctx context.Context, t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	t0 := time.Now()
	if _, err := c.client.BatchV1().Jobs(c.ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", j.Name, err)
	}
	// Stop waiting as soon as the stand-in fails.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.kubelet.Failed():
			cancel()
		case <-wctx.Done():
		}
	}()
	o, err := waitFor(wctx, c.client.BatchV1().Jobs(c.ns), &batchv1.Job{}, j.Name, func(o runtime.Object) bool { return finished(o) != "" })
	if kerr := c.kubelet.Err(); kerr != nil {
		t.Fatalf("kubelet stand-in: %v", kerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	done := o.(*batchv1.Job)
	t.Logf("Job %s: %s after %v (succeeded %d, failed %d, completedIndexes %q, failedIndexes %q)", j.Name, finished(done),
		time.Since(t0).Round(time.Millisecond), done.Status.Succeeded, done.Status.Failed, done.Status.CompletedIndexes, deref(done.Status.FailedIndexes))
	return done
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// campaignJob is deploy/campaign-job.yaml with its campaign cut from
// --random=2000 to plans plans, everything else as written (4 completions,
// 4 in parallel, CACHELAB_SHARDS=4, backoffLimitPerIndex 1, the pod
// failure policy).
func campaignJob(t *testing.T, plans int) *batchv1.Job {
	var j batchv1.Job
	readManifest(t, "campaign-job.yaml", &j)
	args := j.Spec.Template.Spec.Containers[0].Args
	i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--random=") })
	if i < 0 {
		t.Fatalf("deploy/campaign-job.yaml: no --random= argument in %q", args)
	}
	args[i] = fmt.Sprintf("--random=%d", plans)
	return &j
}

// TestIndexedJobRunsTheCampaignRetriesAKilledShardAndMerges runs
// deploy/campaign-job.yaml (8 plans) under the real Job controller on the
// real kube-apiserver: the stand-in kills index 1's first Pod with SIGKILL
// (exit 137, not one of the pod failure policy's exit codes), so
// backoffLimitPerIndex retries that index once; the Job completes with
// indexes 0-3, each shard having run as its completion index with
// CACHELAB_SHARDS=4; then deploy/merge-job.yaml merges the 4 shards' folders.
func TestIndexedJobRunsTheCampaignRetriesAKilledShardAndMerges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var killed atomic.Bool
	c := start(ctx, t, func(p *corev1.Pod) bool {
		return p.Labels["batch.kubernetes.io/job-completion-index"] == "1" && killed.CompareAndSwap(false, true)
	})
	t0 := time.Now()
	job := campaignJob(t, 8)
	shards := *job.Spec.Completions
	done := c.runJob(ctx, t, job)
	campaignTime := time.Since(t0)
	if finished(done) != "Complete" || done.Status.Succeeded != shards || done.Status.Failed != 1 ||
		done.Status.CompletedIndexes != fmt.Sprintf("0-%d", shards-1) || deref(done.Status.FailedIndexes) != "" {
		t.Errorf("campaign Job ended %s, succeeded %d, failed %d, completedIndexes %q, failedIndexes %q; want Complete, %d, 1, \"0-%d\", \"\"",
			finished(done), done.Status.Succeeded, done.Status.Failed, done.Status.CompletedIndexes, deref(done.Status.FailedIndexes), shards, shards-1)
	}
	attempts := c.kubelet.Attempts()
	perIndex := map[string][]Attempt{}
	for _, a := range attempts {
		perIndex[a.Index] = append(perIndex[a.Index], a)
		t.Logf("pod %s index %s failure-count %q: ran %v-%v after the Job's creation, exit %d killed %v, JOB_COMPLETION_INDEX=%s CACHELAB_SHARDS=%s %s",
			a.Pod, a.Index, a.FailureCount, a.Started.Sub(t0).Round(10*time.Millisecond), a.Ended.Sub(t0).Round(10*time.Millisecond),
			a.ExitCode, a.Killed, a.Env["JOB_COMPLETION_INDEX"], a.Env["CACHELAB_SHARDS"], strings.Join(a.Args, " "))
		if a.Env["JOB_COMPLETION_INDEX"] != a.Index {
			t.Errorf("pod %s of index %s ran with JOB_COMPLETION_INDEX=%q", a.Pod, a.Index, a.Env["JOB_COMPLETION_INDEX"])
		}
		if want := "--out=" + filepath.Join(c.results, "shard-"+a.Index); !slices.Contains(a.Args, want) {
			t.Errorf("pod %s of index %s ran %q, want an argument %s", a.Pod, a.Index, a.Args, want)
		}
	}
	for i := range shards {
		idx := fmt.Sprint(i)
		got := perIndex[idx]
		if i != 1 {
			if len(got) != 1 || got[0].ExitCode != 0 {
				t.Errorf("index %s: %d attempts %+v, want one that exits 0", idx, len(got), got)
			}
			continue
		}
		if len(got) != 2 || !got[0].Killed || got[0].ExitCode != 137 || got[0].FailureCount != "0" ||
			got[1].Killed || got[1].ExitCode != 0 || got[1].FailureCount != "1" {
			t.Errorf("index 1: attempts %+v; want the killed one (exit 137, failure count 0), then one retry exiting 0 (failure count 1)", got)
		}
	}
	for _, a := range attempts {
		if a.ExitCode == 0 && !strings.Contains(a.Output, "as expected") {
			t.Errorf("shard %s printed no summary:\n%s", a.Index, a.Output)
		}
	}

	t1 := time.Now()
	var merge batchv1.Job
	readManifest(t, "merge-job.yaml", &merge)
	mdone := c.runJob(ctx, t, &merge)
	if finished(mdone) != "Complete" || mdone.Status.Succeeded != 1 {
		t.Fatalf("merge Job ended %q with %d succeeded", finished(mdone), mdone.Status.Succeeded)
	}
	var out string
	for _, a := range c.kubelet.Attempts()[len(attempts):] {
		out += a.Output
	}
	if !strings.Contains(out, "merged 8 runs") || !strings.Contains(out, fmt.Sprintf("from %d shards", shards)) {
		t.Errorf("the merge printed:\n%s", out)
	}
	for _, f := range []string{"index.html", "junit.xml", "results.json"} {
		if _, err := os.Stat(filepath.Join(c.results, "merged", f)); err != nil {
			t.Errorf("merged campaign: %v", err)
		}
	}
	t.Logf("campaign Job %v, merge Job %v; merge said: %s", campaignTime.Round(time.Millisecond), time.Since(t1).Round(time.Millisecond), strings.TrimSpace(out))
}

// TestABadShardFailsItsIndexWithoutARetry runs deploy/campaign-job.yaml with
// a subject that does not exist: each shard exits 2 (bad usage), one of
// the pod failure policy's FailIndex exit codes, so each index fails at its
// first Pod, with no retry though backoffLimitPerIndex allows one, and the
// Job fails with its failed indexes.
func TestABadShardFailsItsIndexWithoutARetry(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := start(ctx, t, nil)
	job := campaignJob(t, 8)
	args := job.Spec.Template.Spec.Containers[0].Args
	i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "--subject=") })
	if i < 0 {
		t.Fatalf("deploy/campaign-job.yaml: no --subject= argument in %q", args)
	}
	args[i] = "--subject=no-such-subject"
	shards := *job.Spec.Completions
	done := c.runJob(ctx, t, job)
	if finished(done) != "Failed" || done.Status.Failed != shards || done.Status.Succeeded != 0 ||
		deref(done.Status.FailedIndexes) != fmt.Sprintf("0-%d", shards-1) {
		t.Errorf("Job ended %q, failed %d, succeeded %d, failedIndexes %q; want Failed, %d, 0, \"0-%d\"",
			finished(done), done.Status.Failed, done.Status.Succeeded, deref(done.Status.FailedIndexes), shards, shards-1)
	}
	attempts := c.kubelet.Attempts()
	if len(attempts) != int(shards) {
		t.Errorf("%d Pods ran, want %d (one per index, no retry)", len(attempts), shards)
	}
	for _, a := range attempts {
		if a.ExitCode != 2 {
			t.Errorf("pod %s exited %d, want 2 (unknown subject):\n%s", a.Pod, a.ExitCode, a.Output)
		}
	}
	for _, cond := range done.Status.Conditions {
		if cond.Type == batchv1.JobFailed {
			t.Logf("Job failed: reason %s: %s", cond.Reason, cond.Message)
		}
	}
}
