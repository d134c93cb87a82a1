package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachelab/cachelab/fakeapi/serve"
)

// TestParseFaultsReadsProfilesAndNamesWhatIsWrong: a valid profile parses
// (durations as strings); unknown fields and out-of-range values are
// errors that name the field.
func TestParseFaultsReadsProfilesAndNamesWhatIsWrong(t *testing.T) {
	f, err := serve.ParseFaults([]byte(`{"errorRate":0.1,"errorCode":429,"retryAfterSeconds":2,"eventDelay":"250ms","watchBreakInterval":"30s","watchBreakAbrupt":true,"replicaLag":3}`))
	if err != nil {
		t.Fatal(err)
	}
	want := serve.Faults{ErrorRate: 0.1, ErrorCode: 429, RetryAfterSeconds: 2, EventDelay: serve.Duration(250 * time.Millisecond),
		WatchBreakInterval: serve.Duration(30 * time.Second), WatchBreakAbrupt: true, ReplicaLag: 3}
	if f != want {
		t.Errorf("parsed %+v, want %+v", f, want)
	}
	for body, mention := range map[string]string{
		`{"errorRat":0.1}`:        "errorRat",
		`{"errorRate":1.5}`:       "errorRate",
		`{"errorCode":404}`:       "errorCode",
		`{"eventDelay":"soon"}`:   "soon",
		`{"replicaLag":-1}`:       "replicaLag",
		`{"watchBreakInterval":1`: "fault profile",
	} {
		if _, err := serve.ParseFaults([]byte(body)); err == nil || !strings.Contains(err.Error(), mention) {
			t.Errorf("ParseFaults(%s) = %v, want an error mentioning %q", body, err, mention)
		}
	}
}
