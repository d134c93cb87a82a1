package fidelity

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func TestNormalizeRanksWriteResourceVersionsAndFloorsPointsBetweenThem(t *testing.T) {
	// Two servers, same story, different absolute revisions; the real one
	// has unrelated writes between the case's (its list is at 107, past
	// the last write 105; the fake's list is exactly at its last write).
	story := func(a, b, list, bookmark string) []RawAnswer {
		return []RawAnswer{
			{Step: "create a", Code: 201, Body: obj(t, `{"kind":"ConfigMap","metadata":{"name":"a","uid":"U1","resourceVersion":"`+a+`","creationTimestamp":"2026-01-01T00:00:00Z","managedFields":[{}]}}`)},
			{Step: "create b", Code: 201, Body: obj(t, `{"kind":"ConfigMap","metadata":{"name":"b","uid":"U2","resourceVersion":"`+b+`"}}`)},
			{Step: "list", Code: 200, Body: obj(t, `{"kind":"ConfigMapList","metadata":{"resourceVersion":"`+list+`"},"items":[]}`)},
			{Step: "watch", Events: []RawEvent{{Type: "BOOKMARK", Object: obj(t, `{"metadata":{"resourceVersion":"`+bookmark+`","annotations":{"k8s.io/initial-events-end":"true"}}}`)}}},
		}
	}
	want := []Answer{
		{Step: "create a", Code: 201, Object: &Object{Name: "a", UID: "uid#1", RV: "rv#1"}},
		{Step: "create b", Code: 201, Object: &Object{Name: "b", UID: "uid#2", RV: "rv#2"}},
		{Step: "list", Code: 200, List: &List{RV: "rv#2+", Items: []Object{}}},
		{Step: "watch", Events: []Event{{Type: "BOOKMARK", RV: "rv#1+", InitialEventsEnd: true}}},
	}
	real := Normalize(story("100", "105", "107", "103"))
	fake := Normalize(story("2", "3", "3", "2"))
	if d := cmp.Diff(want, real); d != "" {
		t.Errorf("real story (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, fake); d != "" {
		t.Errorf("fake story (-want +got):\n%s", d)
	}
}

func TestNormalizeKeepsMeaningAndDropsServerDetails(t *testing.T) {
	raw := []RawAnswer{{Step: "get", Code: 200, Body: obj(t, `{
		"apiVersion":"lab.cachelab.dev/v1alpha1","kind":"Bellerophon",
		"metadata":{"name":"b","namespace":"fid-x","uid":"X","resourceVersion":"9","generation":2,
			"labels":{"l":"v"},"finalizers":["f"],"deletionTimestamp":"2026-01-01T00:00:00Z",
			"deletionGracePeriodSeconds":0,"creationTimestamp":"2026-01-01T00:00:00Z",
			"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"Y"}]},
		"spec":{"replicas":2},"status":{"readyReplicas":1}}`)}}
	want := []Answer{{Step: "get", Code: 200, Object: &Object{
		Name: "b", UID: "uid#1", RV: "rv#1", Generation: 2, Labels: map[string]string{"l": "v"},
		Finalizers: []string{"f"}, Owners: []string{"ConfigMap/o uid#2"}, Deleting: true,
		Content: map[string]any{"spec": map[string]any{"replicas": float64(2)}, "status": map[string]any{"readyReplicas": float64(1)}},
	}}}
	if d := cmp.Diff(want, Normalize(raw)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestNormalizeStatusKeepsTheBodysCodeAndDetails: a success Status
// without a code and one with "code": 200 differ (the independent corpus
// of issue 18 found the fake's extra code), and so do details naming the
// resource and the Kind.
func TestNormalizeStatusKeepsTheBodysCodeAndDetails(t *testing.T) {
	real := Normalize([]RawAnswer{{Step: "delete", Code: 200, Body: obj(t, `{"kind":"Status","apiVersion":"v1","status":"Success",
		"details":{"name":"a","kind":"configmaps","uid":"U"}}`)}})
	fake := Normalize([]RawAnswer{{Step: "delete", Code: 200, Body: obj(t, `{"kind":"Status","apiVersion":"v1","status":"Success","code":200,
		"details":{"name":"a","kind":"ConfigMap","uid":"V"}}`)}})
	if real[0].Details == nil || real[0].Details.UID != "uid#1" || real[0].BodyCode != 0 {
		t.Errorf("real = %+v, want details with uid#1 and no body code", real[0])
	}
	if d := Compare("c", real, fake); len(d) != 1 || !strings.Contains(d[0].String(), "BodyCode") || !strings.Contains(d[0].String(), "ConfigMap") {
		t.Errorf("want one difference showing the body code and the kind, got %v", d)
	}
}

func TestNormalizeStatusKeepsCodeReasonAndCauseFieldsNotMessages(t *testing.T) {
	raw := []RawAnswer{{Step: "create", Code: 422, Body: obj(t, `{"kind":"Status","apiVersion":"v1","status":"Failure",
		"message":"long text that differs","reason":"Invalid","code":422,
		"details":{"name":"b","causes":[{"reason":"FieldValueRequired","field":"spec.version","message":"Required value"},
		{"reason":"FieldValueInvalid","field":"spec.replicas","message":"x"}]}}`)}}
	want := []Answer{{Step: "create", Code: 422, Status: "Failure", Reason: "Invalid", BodyCode: 422, Details: &Details{Name: "b"}, Causes: []Cause{
		{Field: "spec.replicas", Type: "FieldValueInvalid"}, {Field: "spec.version", Type: "FieldValueRequired"},
	}}}
	if d := cmp.Diff(want, Normalize(raw)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestNormalizeWatchEventsAndGeneratedNames(t *testing.T) {
	raw := []RawAnswer{
		{Step: "create", Code: 201, Body: obj(t, `{"metadata":{"name":"gen-x7k2p","generateName":"gen-","uid":"A","resourceVersion":"50"}}`)},
		{Step: "events", Events: []RawEvent{
			{Type: "ADDED", Object: obj(t, `{"metadata":{"name":"gen-x7k2p","generateName":"gen-","uid":"A","resourceVersion":"50"}}`)},
			{Type: "DELETED", Object: obj(t, `{"metadata":{"name":"gen-x7k2p","generateName":"gen-","uid":"A","resourceVersion":"61"}}`)},
			{Type: "ERROR", Object: obj(t, `{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 1 (40)"}`)},
		}},
	}
	want := []Answer{
		{Step: "create", Code: 201, Object: &Object{Name: "gen-<generated>", UID: "uid#1", RV: "rv#1"}},
		{Step: "events", Events: []Event{
			{Type: "ADDED", Name: "gen-<generated>", RV: "rv#1"},
			{Type: "DELETED", Name: "gen-<generated>", RV: "rv#2"},
			{Type: "ERROR", Code: 410, Reason: "Expired"},
		}},
	}
	if d := cmp.Diff(want, Normalize(raw)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestNormalizeOrderMattersDifferentStoriesDiffer(t *testing.T) {
	// Swapping which object was written first must show.
	a := []RawAnswer{
		{Step: "x", Body: obj(t, `{"metadata":{"name":"a","resourceVersion":"1"}}`)},
		{Step: "y", Body: obj(t, `{"metadata":{"name":"b","resourceVersion":"2"}}`)},
	}
	b := []RawAnswer{
		{Step: "x", Body: obj(t, `{"metadata":{"name":"a","resourceVersion":"2"}}`)},
		{Step: "y", Body: obj(t, `{"metadata":{"name":"b","resourceVersion":"1"}}`)},
	}
	if cmp.Equal(Normalize(a), Normalize(b)) {
		t.Error("two stories with opposite write order normalize the same")
	}
}

// The token volume ServiceAccount admission adds to a Pod has a random
// name: it is compared by its prefix, wherever it appears in the content;
// a name outside the generator's alphabet or length is kept.
func TestNormalizeReplacesTheGeneratedTokenVolumeName(t *testing.T) {
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "resourceVersion": "7"},
		"spec": map[string]any{
			"volumes":    []any{map[string]any{"name": "kube-api-access-d57dl"}, map[string]any{"name": "kube-api-access-mine1"}},
			"containers": []any{map[string]any{"volumeMounts": []any{map[string]any{"name": "kube-api-access-d57dl"}}}},
		}}
	got := Normalize([]RawAnswer{{Step: "create", Code: 201, Body: pod}})[0].Object.Content["spec"].(map[string]any)
	vols := got["volumes"].([]any)
	if n := vols[0].(map[string]any)["name"]; n != "kube-api-access-<generated>" {
		t.Errorf("volume name %v, want kube-api-access-<generated>", n)
	}
	if n := vols[1].(map[string]any)["name"]; n != "kube-api-access-mine1" {
		t.Errorf("a name outside the generator's alphabet became %v", n)
	}
	mount := got["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any)[0].(map[string]any)
	if mount["name"] != "kube-api-access-<generated>" {
		t.Errorf("mount name %v, want kube-api-access-<generated>", mount["name"])
	}
}
