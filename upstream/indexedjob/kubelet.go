// Package indexedjob runs deploy/'s Indexed Job end to end: the real Job
// controller of kube-controller-manager (k8s.io/kubernetes v1.37.1,
// pkg/controller/job, as upstream/job runs it) against a real kube-apiserver
// (make real-apiserver-start), with a kubelet stand-in (Kubelet) that runs
// each Pod's container command as a local process from cachelab's image
// filesystem and writes the Pod's phase back, so that completion indexes,
// a retry under backoffLimitPerIndex and podFailurePolicy, and the merge Job
// are shown on the real API. `make indexed-job-e2e` runs it; see
// docs/scale-out.md.
package indexedjob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// Image is what the kubelet stand-in runs a container from: an unpacked
// image filesystem and its config.
type Image struct {
	// Ref is the image reference Pods must name (for example cachelab:dev).
	Ref string
	// Root is the unpacked filesystem.
	Root string
	// Entrypoint and Cmd are the image config's; Cmd is ignored when a
	// container gives args, as a container runtime does.
	Entrypoint, Cmd []string
	// WorkingDir is the image config's working folder (a path inside the
	// image).
	WorkingDir string
}

// Attempt is one Pod the stand-in ran: what it ran and how it ended.
type Attempt struct {
	// Pod is the Pod's name; Index its completion index label (empty when
	// the Pod has none).
	Pod, Index string
	// FailureCount is the Job controller's
	// batch.kubernetes.io/job-index-failure-count annotation on the Pod.
	FailureCount string
	// Env is the container's environment as resolved (downward API
	// included); Args the expanded command line as run (paths on the host).
	Env  map[string]string
	Args []string
	// ExitCode is what the process returned (128+signal when killed).
	ExitCode int32
	// Killed says the stand-in killed it on purpose (Disrupt).
	Killed bool
	// Output is its stdout and stderr.
	Output string
	// Started and Ended are when the process started and ended.
	Started, Ended time.Time
}

// Kubelet is a kubelet stand-in for one namespace: it runs every new Pod's
// single container as a process of the host, from the image's filesystem
// (Image.Root) with the container's environment resolved the way the
// kubelet does (values, $(VAR) references and downward-API fieldRefs, by
// the kubelet's own expansion and fieldpath code), and writes the Pod's
// status: Running when started, then Succeeded or Failed with the
// container's terminated state and exit code, which podFailurePolicy reads.
//
// It is not a kubelet: no scheduler binds the Pods (they stay without a
// node, which kube-apiserver allows), there is no isolation (the process
// runs as the test's user), and a volume is a host folder: each
// persistentVolumeClaim volume maps to Claims[claimName], and every
// argument and the working folder have the container's mount paths
// rewritten to the host folder. The service-account token volume that
// ServiceAccount admission adds (kube-api-access-*) is not mounted.
type Kubelet struct {
	// Client writes Pod status.
	Client kubernetes.Interface
	// Namespace is the one namespace whose Pods it runs.
	Namespace string
	// Image is the only image it can run.
	Image Image
	// Claims maps a PersistentVolumeClaim's name to the host folder that
	// stands for its volume.
	Claims map[string]string
	// Disrupt, if set, is asked about every Pod before it starts; true
	// kills the process with SIGKILL once started (as an OOM kill or a
	// node's eviction would), so the container ends with exit code 137.
	Disrupt func(*corev1.Pod) bool

	mu       sync.Mutex
	started  map[types.UID]*exec.Cmd
	attempts []Attempt
	errs     []error
	failed   chan struct{} // closed at the first error
}

// Run watches the namespace's Pods and runs each new one until ctx ends;
// it returns once the informer has synced.
func (k *Kubelet) Run(ctx context.Context) error {
	k.mu.Lock()
	k.started = map[types.UID]*exec.Cmd{}
	k.failed = make(chan struct{})
	k.mu.Unlock()
	f := informers.NewSharedInformerFactoryWithOptions(k.Client, 0, informers.WithNamespace(k.Namespace))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { k.observe(ctx, o) },
		UpdateFunc: func(_, o any) { k.observe(ctx, o) },
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				k.kill(p.UID)
			}
		},
	}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("kubelet stand-in: the Pod informer of %s did not sync", k.Namespace)
	}
	return nil
}

// Attempts returns the Pods run so far, in the order they ended.
func (k *Kubelet) Attempts() []Attempt {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Attempt(nil), k.attempts...)
}

// Err returns what went wrong in the stand-in itself (a Pod it could not
// run or whose status it could not write), nil if nothing did.
func (k *Kubelet) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return errors.Join(k.errs...)
}

// Failed is closed when the stand-in first fails (Err says why), so that a
// test waiting on a Job stops at once. Valid after Run.
func (k *Kubelet) Failed() <-chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failed
}

func (k *Kubelet) fail(err error) {
	k.mu.Lock()
	if len(k.errs) == 0 {
		close(k.failed)
	}
	k.errs = append(k.errs, err)
	k.mu.Unlock()
}

// kill ends the process of a deleted (or deleting) Pod, if it runs.
func (k *Kubelet) kill(uid types.UID) {
	k.mu.Lock()
	cmd := k.started[uid]
	k.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func (k *Kubelet) observe(ctx context.Context, o any) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	if p.DeletionTimestamp != nil {
		k.kill(p.UID)
		return
	}
	if p.Status.Phase != "" && p.Status.Phase != corev1.PodPending {
		return
	}
	k.mu.Lock()
	_, seen := k.started[p.UID]
	if !seen {
		k.started[p.UID] = nil
	}
	k.mu.Unlock()
	if seen {
		return
	}
	p = p.DeepCopy()
	go func() {
		if err := k.runPod(ctx, p); err != nil {
			k.fail(fmt.Errorf("pod %s: %w", p.Name, err))
		}
	}()
}

// Command is what the stand-in runs for a Pod's container: the program on
// the host, its arguments, environment and working folder, each path under
// a volume's mount rewritten to the volume's host folder.
type Command struct {
	Path string
	Args []string
	Env  map[string]string
	Dir  string
}

// CommandFor resolves the Pod's one container as the kubelet would: the
// environment (plain values with $(VAR) references to earlier variables,
// and fieldRefs through the kubelet's fieldpath code), then command and
// args expanded with it (the kubelet's expansion code), the
// image's entrypoint when the container gives no command; then maps paths
// into the image's root and the volumes' host folders.
func (k *Kubelet) CommandFor(p *corev1.Pod) (*Command, error) {
	if len(p.Spec.Containers) != 1 || len(p.Spec.InitContainers) != 0 {
		return nil, fmt.Errorf("the stand-in runs Pods of exactly one container (this one has %d, and %d init containers)", len(p.Spec.Containers), len(p.Spec.InitContainers))
	}
	c := &p.Spec.Containers[0]
	if c.Image != k.Image.Ref {
		return nil, fmt.Errorf("container %s wants image %q; the stand-in has only %q", c.Name, c.Image, k.Image.Ref)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
			v = expansion.Expand(v, expansion.MappingFuncFor(env))
		case e.ValueFrom.FieldRef != nil:
			var err error
			if v, err = fieldpath.ExtractFieldPathAsString(p, e.ValueFrom.FieldRef.FieldPath); err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
		default:
			return nil, fmt.Errorf("env %s: only values and fieldRefs are supported by the stand-in", e.Name)
		}
		env[e.Name] = v
	}
	// kubecontainer.ExpandContainerCommandAndArgs, whose package would pull
	// the kubelet's volume and CRI code into this module: the same two calls.
	mapping := expansion.MappingFuncFor(env)
	var command, args []string
	for _, s := range c.Command {
		command = append(command, expansion.Expand(s, mapping))
	}
	for _, s := range c.Args {
		args = append(args, expansion.Expand(s, mapping))
	}
	if len(command) == 0 {
		command = k.Image.Entrypoint
		if len(c.Args) == 0 {
			args = k.Image.Cmd
		}
	}
	argv := append(append([]string(nil), command...), args...)
	if len(argv) == 0 {
		return nil, fmt.Errorf("container %s has no command and the image no entrypoint", c.Name)
	}
	// Mount paths to host folders, longest first.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		host, err := k.volumeHost(p, m.Name)
		if err != nil {
			return nil, err
		}
		if host != "" {
			mounts[m.MountPath] = host
		}
	}
	var paths []string
	for m := range mounts {
		paths = append(paths, m)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	toHost := func(s string) string {
		for _, m := range paths {
			if s == m || strings.HasPrefix(s, m+"/") {
				return mounts[m] + strings.TrimPrefix(s, m)
			}
			if i := strings.Index(s, "="+m); i >= 0 && (len(s) == i+1+len(m) || s[i+1+len(m)] == '/') {
				return s[:i+1] + mounts[m] + s[i+1+len(m):]
			}
		}
		return s
	}
	cmd := &Command{Path: filepath.Join(k.Image.Root, argv[0]), Env: env}
	for _, a := range argv[1:] {
		cmd.Args = append(cmd.Args, toHost(a))
	}
	dir := c.WorkingDir
	if dir == "" {
		dir = k.Image.WorkingDir
	}
	if dir != "" {
		if h := toHost(dir); h != dir {
			cmd.Dir = h
		} else {
			cmd.Dir = filepath.Join(k.Image.Root, dir)
		}
	}
	return cmd, nil
}

func (k *Kubelet) volumeHost(p *corev1.Pod, name string) (string, error) {
	for _, v := range p.Spec.Volumes {
		if v.Name != name {
			continue
		}
		if v.Projected != nil && strings.HasPrefix(v.Name, "kube-api-access-") {
			// ServiceAccount admission's token volume: cachelab's Jobs
			// never call the API, so the stand-in leaves it out.
			return "", nil
		}
		if v.PersistentVolumeClaim == nil {
			return "", fmt.Errorf("volume %s: the stand-in mounts persistentVolumeClaim volumes only", name)
		}
		host, ok := k.Claims[v.PersistentVolumeClaim.ClaimName]
		if !ok {
			return "", fmt.Errorf("volume %s: no host folder for claim %s", name, v.PersistentVolumeClaim.ClaimName)
		}
		return host, nil
	}
	return "", fmt.Errorf("volume mount %s names no volume of the Pod", name)
}

// runPod runs the Pod's container to its end and writes its status.
func (k *Kubelet) runPod(ctx context.Context, p *corev1.Pod) error {
	c, err := k.CommandFor(p)
	if err != nil {
		return err // the test fails on it (Err): the Pod stays Pending
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Dir = c.Dir
	for n, v := range c.Env {
		cmd.Env = append(cmd.Env, n+"="+v)
	}
	sort.Strings(cmd.Env)
	cmd.Stdout, cmd.Stderr = &out, &out
	disrupt := k.Disrupt != nil && k.Disrupt(p)
	start := metav1.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", c.Path, err)
	}
	k.mu.Lock()
	k.started[p.UID] = cmd
	k.mu.Unlock()
	name := p.Spec.Containers[0].Name
	if err := k.writeStatus(ctx, p, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.StartTime = &start
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: name, Image: k.Image.Ref, Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: start}}}}
	}); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	if disrupt {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	end := metav1.Now()
	code := int32(0)
	if werr != nil {
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return werr
		}
		code = int32(ee.ExitCode())
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int32(ws.Signal())
		}
	}
	k.mu.Lock()
	k.attempts = append(k.attempts, Attempt{Pod: p.Name, Index: p.Labels["batch.kubernetes.io/job-completion-index"],
		FailureCount: p.Annotations["batch.kubernetes.io/job-index-failure-count"],
		Env:          c.Env, Args: c.Args, ExitCode: code, Killed: disrupt, Output: out.String(),
		Started: start.Time, Ended: end.Time})
	k.mu.Unlock()
	if ctx.Err() != nil {
		return nil
	}
	phase, reason := corev1.PodSucceeded, "Completed"
	if code != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	return k.writeStatus(ctx, p, func(s *corev1.PodStatus) {
		s.Phase = phase
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: name, Image: k.Image.Ref, Started: ptr(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, StartedAt: start, FinishedAt: end}}}}
	})
}

// writeStatus sets the Pod's status from its latest copy, retrying on a
// conflict; a Pod deleted meanwhile is left alone.
func (k *Kubelet) writeStatus(ctx context.Context, p *corev1.Pod, set func(*corev1.PodStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := k.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && cur.UID != p.UID) {
			return nil // deleted (by the Job controller): nothing to report to
		}
		if err != nil {
			return err
		}
		set(&cur.Status)
		_, err = k.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func ptr[T any](v T) *T { return &v }
