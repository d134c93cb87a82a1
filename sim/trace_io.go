package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// traceHeader is the first line of a trace file.
type traceHeader struct {
	Version int      `json:"version"`
	Plan    *Plan    `json:"plan,omitempty"`
	End     Duration `json:"end"`
	Outcome string   `json:"outcome"`
	// Records is the number of record lines that follow.
	Records int `json:"records"`
	// Schedule is Trace.Schedule.
	Schedule []string `json:"schedule,omitempty"`
	// Metrics is Trace.Metrics.
	Metrics []MetricSeries `json:"metrics,omitempty"`
	// Attempts and Divergences are Trace.Attempts and Trace.Divergences.
	Attempts    int      `json:"attempts,omitempty"`
	Divergences []string `json:"divergences,omitempty"`
}

// WriteTrace writes t as JSON Lines: a header line (version, plan, end,
// outcome, number of records), then one Record per line.
func WriteTrace(w io.Writer, t *Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	v := t.Version
	if v == 0 {
		v = TraceVersion
	}
	if err := enc.Encode(traceHeader{Version: v, Plan: t.Plan, End: t.End, Outcome: t.Outcome, Records: len(t.Records), Schedule: t.Schedule, Metrics: t.Metrics,
		Attempts: t.Attempts, Divergences: t.Divergences}); err != nil {
		return fmt.Errorf("sim: write trace header: %w", err)
	}
	for i := range t.Records {
		if err := enc.Encode(&t.Records[i]); err != nil {
			return fmt.Errorf("sim: write trace record %d: %w", i, err)
		}
	}
	return bw.Flush()
}

// WriteTraceFile writes t to path (see WriteTrace).
func WriteTraceFile(path string, t *Trace) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sim: create trace: %w", err)
	}
	if err := WriteTrace(f, t); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadTrace reads a trace written by WriteTrace. It rejects other versions,
// unknown fields, records out of position and a record count that does not
// match the header's; errors name the line.
func ReadTrace(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 256*1024*1024)
	line := 0
	next := func() ([]byte, bool) {
		for sc.Scan() {
			line++
			if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
				return b, true
			}
		}
		return nil, false
	}
	b, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("sim: read trace: %w", err)
		}
		return nil, fmt.Errorf("sim: read trace: empty input: want a header line then one record per line")
	}
	var h traceHeader
	if err := strictUnmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("sim: trace line %d (header): %w", line, err)
	}
	if h.Version != TraceVersion {
		return nil, fmt.Errorf("sim: trace line %d: unsupported trace version %d (this code reads version %d)", line, h.Version, TraceVersion)
	}
	t := &Trace{Version: h.Version, Plan: h.Plan, End: h.End, Outcome: h.Outcome, Schedule: h.Schedule, Metrics: h.Metrics, Attempts: h.Attempts, Divergences: h.Divergences, Records: make([]Record, 0, h.Records)}
	for {
		b, ok := next()
		if !ok {
			break
		}
		var rec Record
		if err := strictUnmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("sim: trace line %d: %w", line, err)
		}
		if rec.Pos != len(t.Records) {
			return nil, fmt.Errorf("sim: trace line %d: record at position %d, want %d (records must be in order)", line, rec.Pos, len(t.Records))
		}
		t.Records = append(t.Records, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sim: read trace line %d: %w", line+1, err)
	}
	if len(t.Records) != h.Records {
		return nil, fmt.Errorf("sim: trace has %d records, its header says %d (truncated file?)", len(t.Records), h.Records)
	}
	return t, nil
}

// ReadTraceFile reads the trace file at path (see ReadTrace).
func ReadTraceFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sim: open trace: %w", err)
	}
	defer f.Close()
	t, err := ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value on the line")
	}
	return nil
}
