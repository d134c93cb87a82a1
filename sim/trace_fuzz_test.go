package sim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// FuzzReadTrace feeds ReadTrace arbitrary bytes: a trace file a user hands
// to `cachelab report` or `replay`. It must return a trace or an error with
// a message, never panic; a trace it accepts must survive a write and read
// back, and judging it must not panic either.
func FuzzReadTrace(f *testing.F) {
	f.Add([]byte(`{"version":1,"records":2,"end":"1s","outcome":"quiet","plan":{"version":1,"subject":"naivecache","steps":[]}}` + "\n" +
		`{"pos":0,"at":"0s","kind":"write","actor":"setup","verb":"create","resource":"configmaps","ns":"default","name":"a","uid":"u1","rv":2}` + "\n" +
		`{"pos":1,"at":"1s","kind":"final","objects":[{"resource":"configmaps","ns":"default","name":"a","uid":"u1","rv":2}]}` + "\n"))
	f.Add([]byte(`{"version":1,"records":1}` + "\n" + `{"pos":0,"at":"0s","kind":"signal","actor":"x","signal":"quiescence-synced","value":true}`))
	f.Add([]byte(`{"version":1,"records":3}` + "\n" + `{"pos":0,"at":"0s","kind":"handler","event":"DELETED","tombstone":true,"name":"a","uid":"u"}` + "\n"))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := sim.ReadTrace(bytes.NewReader(data))
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		var buf bytes.Buffer
		if err := sim.WriteTrace(&buf, tr); err != nil {
			t.Fatalf("write of a read trace: %v", err)
		}
		back, err := sim.ReadTrace(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("read back of a written trace: %v\n%s", err, buf.Bytes())
		}
		if len(back.Records) != len(tr.Records) || back.Outcome != tr.Outcome || back.End != tr.End {
			t.Fatalf("round trip changed the trace: %d records %q %s, then %d %q %s", len(tr.Records), tr.Outcome, tr.End, len(back.Records), back.Outcome, back.End)
		}
		for _, v := range invariants.Check(tr) {
			if v.Status == invariants.Fail && v.Mark() >= len(tr.Records) {
				t.Fatalf("%s marks #%d, past the trace's %d records", v.Invariant, v.Mark(), len(tr.Records))
			}
		}
	})
}
