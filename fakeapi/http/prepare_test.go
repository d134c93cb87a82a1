package http_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/cachelab/cachelab/fakeapi"
	fakehttp "github.com/cachelab/cachelab/fakeapi/http"
)

// A pipe prepares client-go for bubbles (fakeapi.PrepareClientGo): an
// error passed to utilruntime.HandleError no longer sleeps in the default
// handlers' "rudimentary backoff", which in a bubble after the first reads
// a clock years apart and sleeps for virtual years (issue 15 saw 3 of 4
// controller-runtime runs over a pipe hang there).
func TestAPipePreparesClientGoForBubbles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := fakehttp.NewPipe(fakehttp.NewHandler(fakeapi.NewServer(fakeapi.Options{}), fakehttp.Options{}))
		defer p.Close()
		start := time.Now()
		for range 3 {
			utilruntime.HandleError(errors.New("a failed list"))
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("HandleError slept %s of virtual time: client-go's error backoff is still on", d)
		}
	})
}
