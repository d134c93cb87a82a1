package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLoadPlanAppliesDefaultsExplicitly(t *testing.T) {
	p, err := LoadPlan(strings.NewReader(`{"version":1,"seed":7,"subject":"x","steps":[],"faults":{"errorRate":0.5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Access != "direct" || p.Deadline.D() != 5*time.Minute || p.Quiet.D() != 10*time.Second {
		t.Errorf("defaults: access %q deadline %s quiet %s, want direct, 5m0s, 10s", p.Access, p.Deadline, p.Quiet)
	}
	if !reflect.DeepEqual(p.Faults.ErrorCodes, []int{429, 500, 503}) {
		t.Errorf("errorCodes default = %v, want [429 500 503]", p.Faults.ErrorCodes)
	}
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"access": "direct"`, `"deadline": "5m0s"`, `"quiet": "10s"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("saved plan lacks %s:\n%s", want, buf.String())
		}
	}
}

func TestPlanFileRoundTripsUnchanged(t *testing.T) {
	p1, err := LoadPlanFile(filepath.Join("testdata", "standard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p1.Steps[3].At.D(); got != 3*time.Second {
		t.Fatalf("steps[3].at = %s, want 3s", got)
	}
	if got := p1.Faults.Latency.Max.D(); got != 200*time.Millisecond {
		t.Fatalf("latency.max = %s, want 200ms", got)
	}
	var buf bytes.Buffer
	if err := p1.Save(&buf); err != nil {
		t.Fatal(err)
	}
	first := buf.String()
	p2, err := LoadPlan(&buf)
	if err != nil {
		t.Fatalf("reload of saved plan: %v\n%s", err, first)
	}
	if !reflect.DeepEqual(p1, p2) {
		t.Fatalf("plan changed through save and load:\n%+v\n%+v", p1, p2)
	}
	var again bytes.Buffer
	if err := p2.Save(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != first {
		t.Fatalf("second save differs:\n%s\n---\n%s", first, again.String())
	}
	if !strings.Contains(first, `"k": "<v>"`) {
		t.Errorf("raw object not kept verbatim (HTML escaping?):\n%s", first)
	}
}

func TestPlanErrorsNameFieldLineAndAllowedValues(t *testing.T) {
	const plan = `{
  "version": 1,
  "seed": 1,
  "subject": "x",
  "steps": [
    {"at": "1s", "actor": "user", "op": "create", "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}},
    {"at": "2s", "actor": "controller",
     "op": "crahs"},
    {"at": "3s", "actor": "kubelet2", "op": "create"}
  ],
  "faults": {}
}`
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPlanFile(path)
	if err == nil {
		t.Fatal("LoadPlanFile accepted a bad plan")
	}
	for _, want := range []string{
		path + `:8: steps[1].op: unknown op "crahs" (ops of controller: crash, restart, wait-quiet)`,
		path + `:9: steps[2].actor: unknown actor "kubelet2" (known: user, competitor, kubelet, faults, controller)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestPlanErrorsForBadValues(t *testing.T) {
	cases := []struct {
		name, plan, want string
	}{
		{"unknown top-level field", `{"version":1,"seed":1,"subject":"x","steps":[],"faults":{},"sead":3}`,
			`line 1: sead: unknown field "sead" (known: access, competitor, deadline, faults, kubelet, livelockAfter, maxRecords, name, objects, quiet, schedule, seed, shuffleSchedule, steps, subject, subjectParams, version)`},
		{"field case matters", `{"version":1,"Seed":1,"subject":"x","steps":[]}`, `Seed: unknown field "Seed"`},
		{"unknown step field", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"faults","op":"break","resorce":"pods"}]}`,
			`steps[0].resorce: unknown field "resorce" (known: actor, afterWrite, asOf, at, child, code, for, lag, midReconcile, name, namespace, notOlderThan, object, op, patch, patchType, resource, target, verb)`},
		{"bad duration", `{"version":1,"subject":"x","steps":[{"at":"5 seconds","actor":"user","op":"wait-quiet"}]}`,
			`steps[0].at: want a duration such as "1.5s" or "2m", got "5 seconds"`},
		{"missing version", `{"subject":"x","steps":[]}`, `version: missing: set "version": 1`},
		{"negative record budget", `{"version":1,"subject":"x","steps":[],"maxRecords":-1}`, `maxRecords: must not be negative, got -1`},
		{"future version", `{"version":2,"subject":"x","steps":[]}`, `version: unsupported version 2 (this code reads version 1)`},
		{"missing subject", `{"version":1,"steps":[]}`, `subject: missing`},
		{"bad access", `{"version":1,"subject":"x","access":"grpc"}`, `access: unknown access "grpc" (known: direct, http)`},
		{"op of another actor", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"user","op":"crash"}]}`,
			`steps[0].op: op "crash" is not an op of actor "user" (ops of user: create, update, patch, delete, update-status, patch-status, wait-quiet)`},
		{"field not used by op", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"faults","op":"break","code":500}]}`,
			`steps[0].code: not used by op break (it uses: resource, target)`},
		{"fail-next code", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"faults","op":"fail-next","code":418}]}`,
			`steps[0].code: unsupported code 418 (known: 410, 429, 500, 503, 504)`},
		{"step after deadline", `{"version":1,"subject":"x","deadline":"10s","steps":[{"at":"11s","actor":"user","op":"wait-quiet"}]}`,
			`steps[0].at: 11s is after the plan's deadline 10s`},
		{"negative at", `{"version":1,"subject":"x","steps":[{"at":"-1s","actor":"user","op":"wait-quiet"}]}`,
			`steps[0].at: must not be negative, got -1s`},
		{"object without kind", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"user","op":"create","object":{"apiVersion":"v1","metadata":{"name":"a"}}}]}`,
			`steps[0].object: object lacks kind`},
		{"patch without name", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"user","op":"patch","patch":{"a":1}}]}`,
			`steps[0].name: missing: name the object to patch`},
		{"bad patch type", `{"version":1,"subject":"x","steps":[{"at":"1s","actor":"user","op":"patch","name":"a","patch":{},"patchType":"yaml"}]}`,
			`steps[0].patchType: unknown patch type "yaml" (known: merge, json, strategic)`},
		{"probability", `{"version":1,"subject":"x","faults":{"errorRate":1.5}}`,
			`faults.errorRate: is a probability: want a number in [0, 1], got 1.5`},
		{"distribution kind", `{"version":1,"subject":"x","faults":{"latency":{"kind":"normal"}}}`,
			`faults.latency.kind: unknown distribution "normal" (known: none, fixed, uniform, exponential)`},
		{"uniform bounds", `{"version":1,"subject":"x","faults":{"latency":{"kind":"uniform","min":"2s","max":"1s"}}}`,
			`faults.latency.max: uniform needs min <= max, got min 2s > max 1s`},
		{"error codes", `{"version":1,"subject":"x","faults":{"errorRate":0.1,"errorCodes":[500,404]}}`,
			`faults.errorCodes[1]: unsupported code 404 (known: 429, 500, 503, 504)`},
		{"wrong JSON type", `{"version":"1","subject":"x"}`, `version: want a whole number, got string`},
		{"a list for an object", `{"version":1,"subject":"x","faults":{"latency":[1]}}`, `faults.latency: want an object ({...}), got array`},
		{"a negative seed", `{"version":1,"subject":"x","seed":-1}`, `seed: want a whole number, 0 or more, got number -1`},
		{"syntax", "{\"version\":1,\n\"subject\":\"x\",,}", `line 2: malformed JSON`},
		{"truncated", `{"version":1,`, `malformed JSON: unexpected end of input`},
		{"trailing data", `{"version":1,"subject":"x"} {}`, `unexpected data after the plan object`},
		{"empty", ``, `empty plan`},
		{"duplicate field", `{"version":1,"subject":"x","subject":"y"}`, `subject: field "subject" given twice`},
		{"deep nesting", `{"version":1,"subject":"x","subjectParams":` + strings.Repeat("[", 100000), `nested deeper than 64 levels`},
		{"competitor patch", `{"version":1,"subject":"x","competitor":{"resource":"configmaps","patch":[1]}}`,
			`competitor.patch: want a JSON object (a merge patch)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadPlan(strings.NewReader(c.plan))
			if err == nil {
				t.Fatalf("LoadPlan accepted %s", c.plan)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nlacks %q", err, c.want)
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := d.UnmarshalJSON([]byte(`"1.5s"`)); err != nil || d.D() != 1500*time.Millisecond {
		t.Fatalf("\"1.5s\" -> %s, %v", d, err)
	}
	if err := d.UnmarshalJSON([]byte(`2000`)); err != nil || d.D() != 2000 {
		t.Fatalf("2000 -> %d, %v (want 2000ns)", d, err)
	}
	b, _ := Duration(90 * time.Second).MarshalJSON()
	if string(b) != `"1m30s"` {
		t.Fatalf("marshal 90s = %s", b)
	}
}

func FuzzLoadPlan(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("testdata", "standard.json"))
	f.Add(seed)
	f.Add([]byte(`{"version":1,"seed":1,"subject":"x","steps":[{"at":"1s","actor":"faults","op":"hold","for":"2s"}]}`))
	f.Add([]byte(`{"version":1,"subject":"x","faults":{"latency":{"kind":"exponential","mean":"1s"}}}`))
	f.Add([]byte(`{"version":1,"subject":"x","kubelet":{"readyAfter":"3s"},"steps":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := LoadPlan(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		var buf bytes.Buffer
		if err := p.Save(&buf); err != nil {
			t.Fatalf("save of a loaded plan: %v", err)
		}
		q, err := LoadPlan(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("reload of a saved plan: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the plan:\n%s", buf.Bytes())
		}
	})
}
