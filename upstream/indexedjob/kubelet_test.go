package indexedjob

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// jobPod is a Pod of deploy/campaign-job.yaml as the Job controller made it
// on kube-apiserver v1.37.1 (kubectl get pod -o yaml, trimmed): the
// completion index as a label, JOB_COMPLETION_INDEX added as a fieldRef,
// ServiceAccount admission's token volume.
const jobPod = `
metadata:
  name: cachelab-campaign-1-4rgq7
  labels: {batch.kubernetes.io/job-completion-index: "1"}
  annotations: {batch.kubernetes.io/job-completion-index: "1"}
spec:
  containers:
  - name: cachelab
    image: cachelab:dev
    args: [run, --random=8, --seed=1, --subject=bellerophon, "--out=/results/shard-$(JOB_COMPLETION_INDEX)", "$(UNSET)"]
    env:
    - {name: CACHELAB_SHARDS, value: "4"}
    - name: JOB_COMPLETION_INDEX
      valueFrom: {fieldRef: {apiVersion: v1, fieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"}}
    - {name: OUT, value: "/results/shard-$(JOB_COMPLETION_INDEX)-$(CACHELAB_SHARDS)"}
    volumeMounts:
    - {mountPath: /results, name: results}
    - {mountPath: /var/run/secrets/kubernetes.io/serviceaccount, name: kube-api-access-9fggb, readOnly: true}
  restartPolicy: Never
  volumes:
  - name: results
    persistentVolumeClaim: {claimName: cachelab-results}
  - name: kube-api-access-9fggb
    projected: {sources: [{serviceAccountToken: {path: token}}]}
`

func readPod(t *testing.T) *corev1.Pod {
	t.Helper()
	var p corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(jobPod), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func standIn() *Kubelet {
	return &Kubelet{Namespace: "ns", Claims: map[string]string{"cachelab-results": "/host/results"},
		Image: Image{Ref: "cachelab:dev", Root: "/rootfs", Entrypoint: []string{"/usr/local/bin/cachelab"}, Cmd: []string{"help"}, WorkingDir: "/results"}}
}

// The kubelet stand-in resolves the Indexed Job's environment and command
// as the kubelet does: the fieldRef to the completion index label, $(VAR)
// in a later value and in the args (an unset one left as written), the
// image's entrypoint without its Cmd (the container gives args), the
// results volume's mount path mapped to the claim's host folder.
func TestCommandForResolvesTheIndexedJobsEnvironmentAsTheKubeletDoes(t *testing.T) {
	c, err := standIn().CommandFor(readPod(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != "/rootfs/usr/local/bin/cachelab" || c.Dir != "/host/results" {
		t.Errorf("path %s, dir %s; want /rootfs/usr/local/bin/cachelab, /host/results", c.Path, c.Dir)
	}
	want := []string{"run", "--random=8", "--seed=1", "--subject=bellerophon", "--out=/host/results/shard-1", "$(UNSET)"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args %q, want %q", c.Args, want)
	}
	if c.Env["JOB_COMPLETION_INDEX"] != "1" || c.Env["CACHELAB_SHARDS"] != "4" || c.Env["OUT"] != "/results/shard-1-4" {
		t.Errorf("env %v", c.Env)
	}
}

// What the stand-in cannot run is an error naming why, not a guess.
func TestCommandForRefusesWhatTheStandInCannotRun(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		change     func(*corev1.Pod)
	}{
		{"image", `wants image "busybox"`, func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox" }},
		{"volume", "persistentVolumeClaim volumes only", func(p *corev1.Pod) {
			p.Spec.Volumes[0].PersistentVolumeClaim = nil
			p.Spec.Volumes[0].EmptyDir = &corev1.EmptyDirVolumeSource{}
		}},
		{"claim", "no host folder for claim other", func(p *corev1.Pod) { p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "other" }},
		{"two containers", "exactly one container", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
		}},
		{"secret env", "env CACHELAB_SHARDS: only values and fieldRefs", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env[0].ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}
		}},
	} {
		p := readPod(t)
		tc.change(p)
		if _, err := standIn().CommandFor(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
