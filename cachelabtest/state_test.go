package cachelabtest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/sim"
)

func TestStateListsAndGetsTypedObjects(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	s := &State{objs: []sim.ServerObject{
		{Resource: cms, Object: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","uid":"u1"},"data":{"n":"1"}}`)},
		{Resource: cms, Object: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"other"}}`)},
		{Resource: secrets, Object: []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a","namespace":"default"}}`)},
	}}
	if got := List[corev1.ConfigMap](s, ""); len(got) != 2 || got[0].Name != "a" || got[0].Data["n"] != "1" || got[0].UID != "u1" {
		t.Errorf("List[ConfigMap](all) = %v", got)
	}
	if got := List[corev1.ConfigMap](s, "other"); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("List[ConfigMap](other) = %v", got)
	}
	if sec, ok := Get[corev1.Secret](s, "default", "a"); !ok || sec.Name != "a" {
		t.Errorf("Get[Secret](default/a) = %v, %v", sec, ok)
	}
	if _, ok := Get[corev1.Secret](s, "default", "b"); ok {
		t.Error("Get[Secret](default/b) found an object that does not exist")
	}
	if u := s.Objects(cms, "default"); len(u) != 1 || u[0].GetName() != "a" {
		t.Errorf("Objects(configmaps, default) = %v", u)
	}
	if s.Err() != nil {
		t.Errorf("Err = %v after good objects", s.Err())
	}
}

// A state object that does not decode as the type asked for is an error
// the predicate's caller reports (the run is not desired, and says why),
// not a silent skip.
func TestStateReportsObjectsThatDoNotDecode(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	s := &State{objs: []sim.ServerObject{{Resource: cms, Object: []byte(`{"data": 7}`)}}}
	_ = List[corev1.ConfigMap](s, "")
	if s.Err() == nil || !strings.Contains(s.Err().Error(), "does not decode") {
		t.Errorf("Err = %v, want a decode error", s.Err())
	}
	c := convergingSubject{&subject{c: Controller{Desired: func(s *State) error {
		List[corev1.ConfigMap](s, "")
		return nil
	}}}}
	if ok, why := c.Desired(s.objs); ok || !strings.Contains(why, "does not decode") {
		t.Errorf("Desired = %v %q, want false with the decode error", ok, why)
	}
}
