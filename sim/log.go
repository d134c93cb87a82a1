package sim

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// LogVerbosity is the highest klog/logr verbosity recorded into the trace
// as RecLog records: V(0) to V(2) (client-go's warnings, errors and
// notable events: "watch ended with error", "Server rejected event"). Its
// V(4) and above are chatter.
const LogVerbosity = 2

// KlogEnv, set to a non-empty value, sends the process-wide klog output
// to stderr (default: discarded, see QuietGlobalKlog).
const KlogEnv = "CACHELAB_KLOG"

var klogToStderr atomic.Bool

// QuietGlobalKlog discards klog's process-wide output unless
// CACHELAB_KLOG is set or SetKlogToStderr(true) was called: what a subject
// and client-go log with the run's context goes into the trace (RecLog)
// instead, and the rest (klog.Infof calls without a context) is noise in
// the output of `make test`, `make hassynced` and the CLI. PrepareClientGo
// calls it.
func QuietGlobalKlog() {
	if os.Getenv(KlogEnv) != "" || klogToStderr.Load() {
		klog.SetOutput(os.Stderr)
		klog.ClearLogger()
		return
	}
	klog.SetLogger(logr.Discard())
	klog.SetOutput(io.Discard)
}

// SetKlogToStderr sends (or not) the process-wide klog output to stderr,
// as CACHELAB_KLOG does (the CLI's --klog flag).
func SetKlogToStderr(on bool) {
	klogToStderr.Store(on)
	QuietGlobalKlog()
}

// traceLogSink is a logr.LogSink that records every log line of V <=
// LogVerbosity as a RecLog record of one actor.
type traceLogSink struct {
	rec    *recorder
	actor  string
	name   string
	values []any
}

var _ logr.LogSink = (*traceLogSink)(nil)

// newTraceLogger returns the logger a subject's context carries: its log
// lines, and those of client-go working for it, go into the trace.
func newTraceLogger(rec *recorder, actor string) logr.Logger {
	return logr.New(&traceLogSink{rec: rec, actor: actor})
}

func (s *traceLogSink) Init(logr.RuntimeInfo)  {}
func (s *traceLogSink) Enabled(level int) bool { return level <= LogVerbosity }

func (s *traceLogSink) Info(level int, msg string, kv ...any) {
	s.rec.record(Record{Kind: RecLog, Actor: s.actor, Op: "info", Count: level, Detail: s.format(msg, kv)})
}

func (s *traceLogSink) Error(err error, msg string, kv ...any) {
	r := Record{Kind: RecLog, Actor: s.actor, Op: "error", Detail: s.format(msg, kv)}
	if err != nil {
		r.Reason = err.Error()
	}
	s.rec.record(r)
}

func (s *traceLogSink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any(nil), s.values...), kv...)
	return &c
}

func (s *traceLogSink) WithName(name string) logr.LogSink {
	c := *s
	if c.name != "" {
		name = c.name + "/" + name
	}
	c.name = name
	return &c
}

// format writes "name: msg key=value ..." with the sink's values first.
func (s *traceLogSink) format(msg string, kv []any) string {
	var b strings.Builder
	if s.name != "" {
		b.WriteString(s.name)
		b.WriteString(": ")
	}
	b.WriteString(msg)
	for _, list := range [][]any{s.values, kv} {
		for i := 0; i < len(list); i += 2 {
			b.WriteByte(' ')
			fmt.Fprint(&b, list[i])
			b.WriteByte('=')
			if i+1 < len(list) {
				fmt.Fprintf(&b, "%v", list[i+1])
			} else {
				b.WriteString("(missing)")
			}
		}
	}
	return b.String()
}
