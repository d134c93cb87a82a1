package simbench

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/fakeapi"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// ServerRun is FloorRun served by a fakeapi.Server (no hooks, no
// observer) instead of the floor's map: the same timeline, sent as the
// sim sends it (creates of the plan's JSON objects, JSON merge patches,
// deletes, abrupt watch closes), into the same real informer and
// workqueue on the direct path. Its cost per run is the standard
// scenario's without the sim (no fault policy, latency, recorder or
// trace). It must be called from a goroutine inside a synctest bubble and
// leaves nothing running.
func ServerRun(ctx context.Context) (virtual time.Duration, handled int, err error) {
	start := time.Now()
	srv := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	user := srv.Client("user")
	var opErr error
	create := func(name string) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(configMap(name)); err != nil {
			opErr = err
			return
		}
		if _, err := user.Create(ctx, configMaps, "default", u, metav1.CreateOptions{}); err != nil {
			opErr = err
		}
	}
	for i := range StandardObjects {
		create(fmt.Sprintf("cm%d", i))
	}
	handled, err = runInformer(ctx, srv.Client("simtest/informer").ListerWatcher(configMaps, ""), func(op Op) {
		var err error
		switch op.Op {
		case "create":
			create(op.Name)
		case "delete":
			err = user.Delete(ctx, configMaps, "default", op.Name, metav1.DeleteOptions{})
		case "patch":
			_, err = user.Patch(ctx, configMaps, "default", op.Name, types.MergePatchType, patchOf(op.Value), metav1.PatchOptions{})
		case "break":
			for _, w := range srv.Watchers() {
				err = srv.CloseWatch(w.ID, true)
			}
		}
		if err != nil && opErr == nil {
			opErr = err
		}
	})
	if err == nil {
		err = opErr
	}
	return time.Since(start), handled, err
}
