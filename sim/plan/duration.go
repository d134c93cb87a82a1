package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// MarshalJSON writes d as a Go duration string ("1.5s").
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string ("1.5s", "2m", "0") or a bare
// integer, taken as nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	v, err := parseDurationJSON(b)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// parseDurationJSON parses one JSON value as a Duration.
func parseDurationJSON(b []byte) (time.Duration, error) {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("want a duration such as \"1.5s\" or \"2m\", got %q", s)
		}
		return v, nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as \"1.5s\" or \"2m\", got %s", b)
	}
	return time.Duration(n), nil
}
