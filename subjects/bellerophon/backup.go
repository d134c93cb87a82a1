package bellerophon

import (
	"reflect"
	"runtime"
	"sort"
	"sync"
	"weak"

	"k8s.io/apimachinery/pkg/types"

	"github.com/cachelab/cachelab/sim"
)

// BackupEntry is one backup in the BackupStore: the settings of one
// Bellerophon incarnation (UID), taken by the operator.
type BackupEntry struct {
	Namespace string
	Name      string
	UID       types.UID
	Version   string
	Config    map[string]string
}

// BackupStore stands for the world outside the cluster: an external backup
// service the operator writes to while a Bellerophon lives and must clean
// before the object goes (that is what the lab.cachelab.dev/backup
// finalizer is for). Entries are keyed by UID, so two incarnations of one
// name are two backups. It is safe for concurrent use.
//
// The store outlives a crash of the operator: Subject.Start finds the store
// of its run through BackupStoreFor(env.Rec), so every process start of one
// run shares it, as an external service would.
type BackupStore struct {
	mu      sync.Mutex
	entries map[types.UID]BackupEntry
}

// NewBackupStore returns an empty store.
func NewBackupStore() *BackupStore {
	return &BackupStore{entries: map[types.UID]BackupEntry{}}
}

// Put creates or replaces the backup of e.UID. It reports whether anything
// changed.
func (b *BackupStore) Put(e BackupEntry) bool {
	var cfg map[string]string // nil when empty, so that equal entries compare equal
	for k, v := range e.Config {
		if cfg == nil {
			cfg = make(map[string]string, len(e.Config))
		}
		cfg[k] = v
	}
	e.Config = cfg
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.entries[e.UID]; ok && reflect.DeepEqual(old, e) {
		return false
	}
	b.entries[e.UID] = e
	return true
}

// Delete removes the backup of uid and reports whether there was one.
func (b *BackupStore) Delete(uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.entries[uid]
	delete(b.entries, uid)
	return ok
}

// Get returns the backup of uid.
func (b *BackupStore) Get(uid types.UID) (BackupEntry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[uid]
	return e, ok
}

// ByName returns the backups of namespace/name, of every incarnation.
func (b *BackupStore) ByName(namespace, name string) []BackupEntry {
	var out []BackupEntry
	for _, e := range b.Snapshot() {
		if e.Namespace == namespace && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Snapshot returns every backup, sorted by namespace, name and UID.
func (b *BackupStore) Snapshot() []BackupEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BackupEntry, 0, len(b.entries))
	for _, e := range b.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		if a.Name != c.Name {
			return a.Name < c.Name
		}
		return a.UID < c.UID
	})
	return out
}

// BackupResource is the Resource of the backup store's entries in trace
// snapshots (RecCache records with Handler BackupCacheName).
const BackupResource = "backups"

// BackupCacheName is the Handler of the RecCache records that snapshot the
// backup store after every change.
const BackupCacheName = "backup-store"

// objectStates renders the store as trace ObjectStates.
func (b *BackupStore) objectStates() []sim.ObjectState {
	snap := b.Snapshot()
	out := make([]sim.ObjectState, 0, len(snap))
	for _, e := range snap {
		out = append(out, sim.ObjectState{Resource: BackupResource, Namespace: e.Namespace, Name: e.Name, UID: string(e.UID)})
	}
	return out
}

// backupStores maps a run, identified by its Recorder, to its BackupStore.
// The Recorder is held weakly: a strong key kept every run's recorder (its
// whole trace) alive for the life of the process, ~1 MB per run of a
// campaign (issue 17). An entry is deleted by a cleanup once its run's
// recorder is collected.
//
// No lookup reads another run's key: weak.Pointer.Value, called while the
// garbage collector marks, marks the object it returns, so a sweep of the
// keys on each lookup (as this registry did) kept every finished run not
// yet freed alive through each cycle that a run's start overlapped, and a
// campaign's live heap climbed to gigabytes.
var backupStores = struct {
	sync.Mutex
	byRun map[weak.Pointer[sim.RunMarker]]*BackupStore
}{byRun: map[weak.Pointer[sim.RunMarker]]*BackupStore{}}

// valueOf is weak.Pointer.Value (a variable for the test that no lookup
// reads another run's key).
var valueOf = func(k weak.Pointer[sim.RunMarker]) *sim.RunMarker { return k.Value() }

// BackupStoreFor returns the BackupStore of the run that rec records, the
// same for every process start of the subject within that run (sim.RunRef).
// A Recorder sim did not make gets a fresh store each time: backups then
// do not survive a restart. The registry holds nothing of a run that has
// ended and been collected.
func BackupStoreFor(rec sim.Recorder) *BackupStore {
	key, ok := sim.RunRef(rec)
	if !ok {
		return NewBackupStore()
	}
	backupStores.Lock()
	defer backupStores.Unlock()
	s, found := backupStores.byRun[key]
	if !found {
		s = NewBackupStore()
		backupStores.byRun[key] = s
		// The run is alive (rec is its own): reading its key marks nothing
		// that is not live already.
		if m := valueOf(key); m != nil {
			runtime.AddCleanup(m, forgetRun, key)
		}
	}
	return s
}

// forgetRun deletes the registry's entry of a collected run.
func forgetRun(key weak.Pointer[sim.RunMarker]) {
	backupStores.Lock()
	defer backupStores.Unlock()
	delete(backupStores.byRun, key)
}
