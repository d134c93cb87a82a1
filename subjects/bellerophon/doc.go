// Package bellerophon is a small CRD operator written the way
// k8s.io/sample-controller teaches, and its mutants: each a named,
// documented single bug a real controller has had. It implements
// sim.Subject and sim.Converger and registers itself with sim as
// "bellerophon" and "bellerophon/<mutant>" (see Bugs).
//
// A Bellerophon (apis/lab/v1alpha1, CRD in config/crd.yaml) asks for
// spec.replicas Pods running image "bellerophon:<spec.version>" and a
// ConfigMap "<name>-config" whose data is spec.config. The Controller
// (controller.go, laid out as sample-controller's) owns them through
// controller ownerReferences and:
//
//   - reads only through informers on the lab's fake API server: an
//     unstructured SharedIndexInformer for Bellerophons (converted to the
//     typed object when read), typed ones with corev1 listers for Pods and
//     ConfigMaps;
//   - keeps ReplicaSet-style expectations (expectations.go), so a Pod
//     informer that lags behind the controller's own creates and deletes
//     never causes duplicates;
//   - reads its own writes (KEP-5647): ConfigMap writes wait until the
//     informer's store resourceVersion reaches the controller's last
//     ConfigMap write (the ConfigMap has no expectations), and a status is
//     compared with the controller's own last write when the cache has not
//     caught up with it;
//   - ignores updates that change nothing it acts on (labels, annotations,
//     the echo of its own status write);
//   - recreates a child someone else deleted only after a growing hold, so
//     that a cached owner already deleted on the server (whose new children
//     the garbage collector deletes at once) cannot make it loop;
//   - compares UIDs, so a Bellerophon deleted and recreated under the same
//     name (possibly seen as one update after a relist) is a new object;
//   - unwraps cache.DeletedFinalStateUnknown tombstones;
//   - writes with optimistic concurrency and retries conflicts with a fresh
//     read (retry.RetryOnConflict);
//   - carries the finalizer lab.cachelab.dev/backup, which removes the
//     object's entry in an external BackupStore before the object goes;
//   - records Events through client-go's record.EventRecorder;
//   - writes status only when it changed, with observedGeneration;
//   - starts its workers only when every event handler registration has
//     synced (README.md says why the informer's own signal is not enough).
//
// Everything it does is recorded into the sim trace: handler calls, queue
// operations, reconciles, sync signals (informer-synced, handler-synced,
// rv-synced and a passive quiescence-synced, per resource and for all
// together), backup-store snapshots and notes.
package bellerophon
