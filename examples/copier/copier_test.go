package copier_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/cachelab/cachelab/cachelabtest"
	"github.com/cachelab/cachelab/examples/copier"
)

// plans are random plans on ConfigMaps, whose children are the Secrets
// of the same name.
var plans = cachelabtest.Random(cachelabtest.Children("secrets", "%s"))

// lab puts the copier under the lab: how it starts, what it wants.
func lab(opts copier.Options) cachelabtest.Controller {
	return cachelabtest.Controller{
		Start: func(ctx context.Context, env *cachelabtest.Env) error {
			c, err := copier.New(env.Kube, env.Informers, cachelabtest.RecordQueue(env, copier.NewQueue()), opts)
			if err != nil {
				return err
			}
			env.Informers.Start(ctx.Done())
			go c.Run(ctx, 2)
			return nil
		},
		Desired: func(s *cachelabtest.State) error {
			return copier.Desired(cachelabtest.List[corev1.ConfigMap](s, ""), cachelabtest.Getter[corev1.Secret](s))
		},
	}
}

func TestCopier(t *testing.T) {
	cachelabtest.Test(t, lab(copier.Options{}), plans)
}

// The planted bug (the Secrets are not watched) is caught: a random plan
// that deletes or changes a Secret leaves it so, and the lab prints the
// plan's replay command.
func TestLabCatchesIgnoreSecrets(t *testing.T) {
	failures := cachelabtest.Catch(t, lab(copier.Options{IgnoreSecrets: true}), plans)
	if len(failures) == 0 {
		t.Fatal("the lab did not catch the planted bug (IgnoreSecrets)")
	}
	first, last := failures[0], failures[len(failures)-1]
	t.Logf("caught after %d plan(s); shrunk to %d step(s) after %d runs:\n%s", first.Runs, len(last.Plan.Steps), last.Runs, last.Report)
}
