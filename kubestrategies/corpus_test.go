package kubestrategies

import (
	"context"
	"os"
	"regexp"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
	"github.com/cachelab/cachelab/fidelity"
)

// The main module's corpus: transcripts recorded from kube-apiserver
// v1.37.1 and the differences kept on purpose.
const (
	transcriptDir  = "../fidelity/testdata/transcripts"
	knownDiffsPath = "../fidelity/testdata/known-differences.json"
)

// runOnFake runs c against a fresh fake server as fidelity's own test
// does (fidelity.NewFakeServer, over the in-memory pipe, in a synctest
// bubble) and returns its normalized answers. The store serves through
// whatever strategies are registered when it is created.
func runOnFake(t *testing.T, c fidelity.Case) ([]fidelity.Answer, error) {
	t.Helper()
	var (
		raw    []fidelity.RawAnswer
		runErr error
	)
	synctest.Test(t, func(t *testing.T) {
		srv, err := fidelity.NewFakeServer(fakeapi.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pipe := fakehttp.NewPipe(fakehttp.NewHandler(srv, fakehttp.Options{}))
		defer pipe.Close()
		defer srv.Close()
		ctx := context.Background()
		cfg := pipe.RESTConfig("fidelity")
		cfg.UserAgent = "Go-http-client/2.0" // as fidelity's runOnFake
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace()}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		raw, runErr = fidelity.RunCase(ctx, c, fidelity.EnvConfig{
			Namespace: c.Namespace(),
			Config:    cfg,
			Compact:   func(context.Context) error { return srv.Compact(srv.ResourceVersion()) },
			Wait:      30 * time.Second,
		})
	})
	return fidelity.Normalize(raw), runErr
}

// score is one pass of the corpus.
type score struct {
	identical map[string]bool // case -> identical to the recording
	diffs     []fidelity.Difference
	ran       map[string]bool
}

// runCorpus runs every case with a transcript (matching CACHELAB_FIDELITY_CASES
// if set) and compares it with the recording.
func runCorpus(t *testing.T) score {
	t.Helper()
	filter := regexp.MustCompile(os.Getenv("CACHELAB_FIDELITY_CASES"))
	sc := score{identical: map[string]bool{}, ran: map[string]bool{}}
	for _, c := range fidelity.Cases {
		if !filter.MatchString(c.Name) {
			continue
		}
		want, err := fidelity.ReadTranscript(transcriptDir, c.Name)
		if err != nil || want.Error != "" {
			continue // not recorded (yet): fidelity's own test says so
		}
		got, err := runOnFake(t, c)
		if err != nil {
			t.Errorf("case %s failed on the fake: %v", c.Name, err)
			continue
		}
		sc.ran[c.Name] = true
		d := fidelity.Compare(c.Name, want.Steps, got)
		sc.identical[c.Name] = len(d) == 0
		sc.diffs = append(sc.diffs, d...)
	}
	return sc
}

func (sc score) count() (identical int) {
	for _, ok := range sc.identical {
		if ok {
			identical++
		}
	}
	return identical
}

// TestCorpusWithKubeStrategies replays the fidelity corpus against the
// fake twice in one process, with the lab's hand-written rules and with
// kube-apiserver's strategies, and compares each with the recordings. It
// fails on a case identical by hand that the real strategies make differ
// (a regression of the strategy path, which the store's own code would
// then hide), and reports both scores and every case that changed.
func TestCorpusWithKubeStrategies(t *testing.T) {
	if _, err := os.Stat(transcriptDir); err != nil {
		t.Skipf("no transcripts in %s: %v", transcriptDir, err)
	}
	Unregister()
	byHand := runCorpus(t)
	Register()
	real := runCorpus(t)

	var fixed, broken []string
	for name := range real.ran {
		switch {
		case real.identical[name] && !byHand.identical[name]:
			fixed = append(fixed, name)
		case !real.identical[name] && byHand.identical[name]:
			broken = append(broken, name)
		}
	}
	sort.Strings(fixed)
	sort.Strings(broken)
	for _, name := range fixed {
		t.Logf("identical only with the real strategies: %s", name)
	}
	for _, d := range real.diffs {
		if contains(broken, d.Case) {
			t.Errorf("identical by hand, differs with the real strategies: %s", d)
		}
	}
	known, err := fidelity.ReadKnownDifferences(knownDiffsPath)
	if err != nil {
		t.Fatal(err)
	}
	unlistedHand, _ := fidelity.Verdict(byHand.diffs, known, byHand.ran)
	unlistedReal, _ := fidelity.Verdict(real.diffs, known, real.ran)
	t.Logf("hand-written rules: %d/%d cases identical (%d unlisted differences); kube-apiserver's strategies: %d/%d identical (%d unlisted differences)",
		byHand.count(), len(byHand.ran), len(unlistedHand), real.count(), len(real.ran), len(unlistedReal))
	if os.Getenv("CACHELAB_SHOW_DIFFS") != "" {
		for _, d := range unlistedReal {
			t.Logf("with the real strategies: %s", d)
		}
	}
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}
