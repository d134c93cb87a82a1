package fidelity

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// coreEvent is a core/v1 Event about the ConfigMap about in namespace ns,
// as client-go's EventRecorder writes one (source, first and last
// timestamps, count).
func coreEvent(name, ns, about, typ string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": name},
		"involvedObject": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": about},
		"reason":         "Synced", "message": "synced " + about, "type": typ,
		"source":         map[string]any{"component": "lab-controller"},
		"firstTimestamp": "2026-01-02T03:04:05Z", "lastTimestamp": "2026-01-02T03:04:05Z", "count": 1,
	}
}

// eventCases are the core/v1 Events controllers write through their
// EventRecorder: created, counted up by a patch, and what validation
// refuses.
var eventCases = []Case{
	{Name: "event-record-and-count", Doc: "An EventRecorder's Event is created as sent; the recorder's aggregation patches count and lastTimestamp; an update of a missing Event creates it.", Run: func(e *Env) {
		e.Create("create", Events, coreEvent("cm.1", e.Namespace, "cm", "Normal"))
		e.Patch("count up", Events, "cm.1", "", types.StrategicMergePatchType, `{"count":2,"lastTimestamp":"2026-01-02T03:04:09Z","message":"synced cm again"}`)
		e.Update("update a missing event", Events, "cm.2", coreEvent("cm.2", e.Namespace, "cm", "Warning"))
		e.ListNames("list", Events, metav1.ListOptions{})
	}},
	{Name: "event-validation", Doc: "A core/v1 Event must name an involved object in its own namespace; a type other than Normal or Warning is refused.", Run: func(e *Env) {
		e.Create("involved object in another namespace", Events, coreEvent("other.1", "elsewhere", "cm", "Normal"))
		e.Create("type Bogus", Events, coreEvent("bogus.1", e.Namespace, "cm", "Bogus"))
		missing := coreEvent("noreason.1", e.Namespace, "cm", "Normal")
		delete(missing, "involvedObject")
		e.Create("no involved object", Events, missing)
	}},
}

func init() { Cases = append(Cases, eventCases...) }
