package sim

import (
	"fmt"
	"sort"
	"sync"
)

var registry = struct {
	sync.RWMutex
	byName map[string]SubjectInfo
}{byName: map[string]SubjectInfo{}}

// RegisterSubject makes a subject available to Plans by name. Subjects call
// it from init; registering a name twice panics, as a programming error.
func RegisterSubject(info SubjectInfo) {
	registry.Lock()
	defer registry.Unlock()
	if info.Name == "" || info.New == nil {
		panic("sim: RegisterSubject needs a Name and a New factory")
	}
	if _, dup := registry.byName[info.Name]; dup {
		panic(fmt.Sprintf("sim: subject %q registered twice", info.Name))
	}
	registry.byName[info.Name] = info
}

// LookupSubject returns the subject registered under name.
func LookupSubject(name string) (SubjectInfo, bool) {
	registry.RLock()
	defer registry.RUnlock()
	info, ok := registry.byName[name]
	return info, ok
}

// Subjects lists the registered subjects, sorted by name.
func Subjects() []SubjectInfo {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]SubjectInfo, 0, len(registry.byName))
	for _, info := range registry.byName {
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
