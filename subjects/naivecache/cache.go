package naivecache

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Rule names which rule of the origin notes' main loop (step 3) an event
// fell under.
type Rule string

// The rules. The first four are the notes' own; RuleUpdateUnknown is the case
// the notes did not foresee.
const (
	// RuleCreate: not in cache + create event: store a deep copy.
	RuleCreate Rule = "create"
	// RuleCreateKnown: in cache + create event: log it ("should not
	// happen" if the queue is a FIFO), then swap the new state in.
	RuleCreateKnown Rule = "create-known"
	// RuleUpdate: in cache + update: deep copy, swap in under the entry lock.
	RuleUpdate Rule = "update"
	// RuleUpdateUnknown: not in cache + update (not in the notes): log it,
	// store a deep copy.
	RuleUpdateUnknown Rule = "update-unknown"
	// RuleDelete: in cache + delete event: remove the entry.
	RuleDelete Rule = "delete"
	// RuleDeleteUnknown: not in cache + delete event: nothing to delete; log
	// it ("it may hide a problem").
	RuleDeleteUnknown Rule = "delete-unknown"
)

// The log notes the rules write, as the origin notes word them.
const (
	NoteDeleteUnknown = "delete for unknown key"
	NoteCreateKnown   = "create for key already cached: out of order?"
	NoteUpdateUnknown = "update for unknown key"
)

// ErrBadEvent is wrapped by Apply's errors for events it cannot apply.
var ErrBadEvent = errors.New("naivecache: bad event")

// Outcome is what applying one event did to the cache.
type Outcome struct {
	// Rule is the rule the event fell under.
	Rule Rule
	// Key is the object's key, namespace/name.
	Key string
	// Old is the cached object before the event (nil if there was none).
	Old runtime.Object
	// New is the cached object after the event (nil after a delete).
	New runtime.Object
	// Note is the log line the rule writes ("" for the silent rules).
	Note string
}

// entry is one cached object behind its own lock. Writers replace obj (a
// fresh deep copy) under mu.Lock; readers copy it out under mu.RLock.
type entry struct {
	mu  sync.RWMutex
	obj runtime.Object
}

// Cache is the origin notes' cache: a map keyed namespace/name, a lock for
// the map and a lock per entry, deep copies in and out. It knows nothing of
// watches or time: Apply is fed one event at a time by the watch loop.
type Cache struct {
	// mu guards the map itself (adding and removing entries).
	mu      sync.RWMutex
	entries map[string]*entry
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[string]*entry{}} }

// Key returns the notes' key for obj: namespace/name, or name for a
// cluster-scoped object.
func Key(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("%w: object %T has no metadata: %v", ErrBadEvent, obj, err)
	}
	if m.GetName() == "" {
		return "", fmt.Errorf("%w: object %T has no name", ErrBadEvent, obj)
	}
	if m.GetNamespace() == "" {
		return m.GetName(), nil
	}
	return m.GetNamespace() + "/" + m.GetName(), nil
}

// Apply applies one watch event (ADDED, MODIFIED or DELETED) by the notes'
// rules and says what it did. Any other event type, or an object without
// metadata, is an error wrapping ErrBadEvent and leaves the cache unchanged.
func (c *Cache) Apply(t watch.EventType, obj runtime.Object) (Outcome, error) {
	if obj == nil {
		return Outcome{}, fmt.Errorf("%w: %s event without an object", ErrBadEvent, t)
	}
	key, err := Key(obj)
	if err != nil {
		return Outcome{}, err
	}
	switch t {
	case watch.Added, watch.Modified:
		// Deep copy before any lock: the cache never shares memory with the
		// event's producer, and readers are not held up by the copy.
		cp := obj.DeepCopyObject()
		c.mu.Lock()
		e, cached := c.entries[key]
		if !cached {
			c.entries[key] = &entry{obj: cp}
			c.mu.Unlock()
			out := Outcome{Rule: RuleCreate, Key: key, New: cp}
			if t == watch.Modified {
				out.Rule, out.Note = RuleUpdateUnknown, NoteUpdateUnknown
			}
			return out, nil
		}
		c.mu.Unlock()
		// Lock the entry, swap the copy in, unlock: readers of this entry
		// wait only for the swap; readers of other entries not at all.
		e.mu.Lock()
		old := e.obj
		e.obj = cp
		e.mu.Unlock()
		out := Outcome{Rule: RuleUpdate, Key: key, Old: old, New: cp}
		if t == watch.Added {
			out.Rule, out.Note = RuleCreateKnown, NoteCreateKnown
		}
		return out, nil
	case watch.Deleted:
		c.mu.Lock()
		e, cached := c.entries[key]
		if !cached {
			c.mu.Unlock()
			return Outcome{Rule: RuleDeleteUnknown, Key: key, Note: NoteDeleteUnknown}, nil
		}
		delete(c.entries, key)
		c.mu.Unlock()
		e.mu.RLock()
		old := e.obj
		e.mu.RUnlock()
		return Outcome{Rule: RuleDelete, Key: key, Old: old}, nil
	default:
		return Outcome{}, fmt.Errorf("%w: cannot apply a %q event (want ADDED, MODIFIED or DELETED)", ErrBadEvent, t)
	}
}

// Get returns a deep copy of the object cached under key.
func (c *Cache) Get(key string) (runtime.Object, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.obj.DeepCopyObject(), true
}

// List returns deep copies of every cached object, sorted by key.
func (c *Cache) List() []runtime.Object {
	c.mu.RLock()
	keys := make([]string, 0, len(c.entries))
	for k := range c.entries {
		keys = append(keys, k)
	}
	entries := make([]*entry, len(keys))
	sort.Strings(keys)
	for i, k := range keys {
		entries[i] = c.entries[k]
	}
	c.mu.RUnlock()
	out := make([]runtime.Object, 0, len(entries))
	for _, e := range entries {
		e.mu.RLock()
		out = append(out, e.obj.DeepCopyObject())
		e.mu.RUnlock()
	}
	return out
}

// Keys returns the cached keys, sorted.
func (c *Cache) Keys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, len(c.entries))
	for k := range c.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Len returns the number of cached objects.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
