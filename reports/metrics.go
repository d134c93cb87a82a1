package reports

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cachelab/cachelab/sim"
)

// metricGroup is the charts of one queue or informer of one client.
type metricGroup struct {
	Client, Name string
	Charts       []metricChart
}

// metricChart is one series drawn as an inline SVG over the run's virtual
// time (the timeline's x axis at "Fit").
type metricChart struct {
	Metric, Kind string
	// Summary says what the series holds ("13 updates, last 0, max 3").
	Summary string
	// SVG is the drawing; Points the series as "ms:value" pairs, for
	// reading and for tests.
	SVG    template.HTML
	Points string
}

// metricOrder is the order of a group's charts (the names of
// fakeapi/clientmetrics, which sim.MetricSeries come from).
var metricOrder = []string{
	"workqueue_depth", "workqueue_adds_total", "workqueue_retries_total",
	"workqueue_queue_duration_seconds", "workqueue_work_duration_seconds",
	"informer_queued_items", "informer_store_resource_version", "informer_processing_latency_seconds",
}

// formatValue renders a metric value compactly ("3", "0.25", "1.5e-05").
func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// metricGroups draws t's client-go metrics, grouped by client and queue or
// informer.
func metricGroups(t *sim.Trace) []metricGroup {
	var out []metricGroup
	for _, s := range t.Metrics {
		if len(s.Points) == 0 && s.Count == 0 {
			continue // a metric client-go never updated (no retries)
		}
		if n := len(out); n == 0 || out[n-1].Client != s.Client || out[n-1].Name != s.Name {
			out = append(out, metricGroup{Client: s.Client, Name: s.Name})
		}
		g := &out[len(out)-1]
		g.Charts = append(g.Charts, drawSeries(s, t.End.D()))
	}
	for i := range out {
		slices.SortStableFunc(out[i].Charts, func(a, b metricChart) int {
			return slices.Index(metricOrder, a.Metric) - slices.Index(metricOrder, b.Metric)
		})
	}
	return out
}

// Chart geometry (SVG user units).
const (
	chartW, chartH  = 600, 80
	chartL, chartR  = 56, 8
	chartT, chartB  = 6, 16
	chartMaxMarks   = 2000
	chartPlotWidth  = chartW - chartL - chartR
	chartPlotHeight = chartH - chartT - chartB
)

// drawSeries draws one series: a step line for gauges and counters, a dot
// per observation for histograms.
func drawSeries(s sim.MetricSeries, end time.Duration) metricChart {
	c := metricChart{Metric: s.Metric, Kind: string(s.Kind)}
	if end <= 0 {
		end = time.Second
	}
	hi := 0.0
	for _, p := range s.Points {
		hi = max(hi, p.V)
	}
	if hi <= 0 {
		hi = 1
	}
	x := func(at time.Duration) float64 {
		return chartL + float64(chartPlotWidth)*min(float64(at)/float64(end), 1)
	}
	y := func(v float64) float64 { return chartT + float64(chartPlotHeight)*(1-max(v, 0)/hi) }
	var pts strings.Builder
	for i, p := range s.Points {
		if i > 0 {
			pts.WriteByte(' ')
		}
		fmt.Fprintf(&pts, "%d:%s", p.At.Milliseconds(), formatValue(p.V))
	}
	c.Points = pts.String()

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="metric-svg" viewBox="0 0 %d %d" role="img" aria-label="%s">`, chartW, chartH, template.HTMLEscapeString(s.Metric+" over virtual time"))
	// Axes: the value range on the left, the run's time below.
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, chartL, chartH-chartB, chartW-chartR, chartH-chartB)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, chartL, chartT, chartL, chartH-chartB)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`, chartL-4, chartT+8, formatValue(hi))
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">0</text>`, chartL-4, chartH-chartB)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">0s</text>`, chartL, chartH-2)
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="end">%s</text>`, chartW-chartR, chartH-2, end.String())
	marks := s.Points
	if len(marks) > chartMaxMarks {
		marks = marks[:chartMaxMarks]
	}
	switch s.Kind {
	case "histogram":
		for _, p := range marks {
			fmt.Fprintf(&b, `<circle class="obs" cx="%.1f" cy="%.1f" r="2"><title>%s at %s</title></circle>`, x(p.At), y(p.V), formatValue(p.V)+" s", p.At)
		}
	default:
		var d strings.Builder
		fmt.Fprintf(&d, "M%.1f %.1f", x(0), y(0))
		for _, p := range marks {
			fmt.Fprintf(&d, " H%.1f V%.1f", x(p.At), y(p.V))
		}
		fmt.Fprintf(&d, " H%.1f", x(end))
		fmt.Fprintf(&b, `<path class="step" d="%s"/>`, d.String())
		for _, p := range marks {
			fmt.Fprintf(&b, `<circle class="pt" cx="%.1f" cy="%.1f" r="1.5"><title>%s at %s</title></circle>`, x(p.At), y(p.V), formatValue(p.V), p.At)
		}
	}
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String()) // built from numbers and escaped text only

	switch s.Kind {
	case "histogram":
		mean := 0.0
		if s.Count > 0 {
			mean = s.Sum / float64(s.Count)
		}
		c.Summary = fmt.Sprintf("%d observations, mean %s s, max %s s", s.Count, formatValue(mean), formatValue(hiOf(s)))
	default:
		c.Summary = fmt.Sprintf("%d updates, max %s, last %s", s.Count, formatValue(hiOf(s)), formatValue(s.Last))
	}
	if s.Dropped > 0 {
		c.Summary += fmt.Sprintf(" (%d later points not kept)", s.Dropped)
	}
	return c
}

func hiOf(s sim.MetricSeries) float64 {
	hi := 0.0
	for _, p := range s.Points {
		hi = max(hi, p.V)
	}
	return hi
}
