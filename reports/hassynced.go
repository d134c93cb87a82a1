package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"time"
)

// SyncDefinitionStats is what `make hassynced` measured of one definition of
// "synced" on one subject's runs, for HasSynced.
type SyncDefinitionStats struct {
	// Subject and Signal name the row ("informer-realfifo", "handler-synced").
	Subject string
	Signal  string
	// Traces is the number of runs that recorded the signal.
	Traces int
	// Flips is the number of judged flips to true; FalsePositives of them
	// came while the cache lacked what the signal promises.
	Flips, FalsePositives int
	// LateBy holds, per sound flip, how long after true sync it came.
	LateBy []time.Duration
	// StaleBy holds, per false flip, how long before the flip the server
	// write the cache lacked had been made.
	StaleBy []time.Duration
}

// durationBuckets are the histogram buckets' upper bounds (the last is
// unbounded).
var durationBuckets = []struct {
	max   time.Duration
	label string
}{
	{0, "0"}, {time.Millisecond, "≤1ms"}, {10 * time.Millisecond, "≤10ms"}, {100 * time.Millisecond, "≤100ms"},
	{time.Second, "≤1s"}, {10 * time.Second, "≤10s"}, {-1, ">10s"},
}

// hasSyncedBar is one bar of a histogram.
type hasSyncedBar struct {
	Label      string
	N          int
	X, Y, H, W int
}

type hasSyncedRow struct {
	SyncDefinitionStats
	Share      string
	ShareWidth int
	Late       []hasSyncedBar
	Stale      []hasSyncedBar
}

// histogram buckets ds into durationBuckets and lays the bars out in a
// plot 7 bars of 36 pixels wide and 60 pixels high.
func histogram(ds []time.Duration) []hasSyncedBar {
	counts := make([]int, len(durationBuckets))
	for _, d := range ds {
		for i, b := range durationBuckets {
			if b.max < 0 || d <= b.max {
				counts[i]++
				break
			}
		}
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	bars := make([]hasSyncedBar, len(counts))
	for i, c := range counts {
		h := 0
		if top > 0 {
			h = c * 60 / top
			if c > 0 && h == 0 {
				h = 1
			}
		}
		bars[i] = hasSyncedBar{Label: durationBuckets[i].label, N: c, X: i * 36, Y: 60 - h, H: h, W: 32}
	}
	return bars
}

var hasSyncedTmpl = template.Must(template.New("hassynced").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>cachelab: what each "synced" really promises</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.4rem .5rem;text-align:left;vertical-align:middle}
th{background:#f3f3f6}.share{width:12rem}.bar{height:14px;background:#c33;display:inline-block;vertical-align:middle}
.bg{width:120px;height:14px;background:#e8e8ee;display:inline-block;vertical-align:middle}
svg text{font-size:9px;fill:#555}.late rect{fill:#4a7}.stale rect{fill:#c33}.none{color:#999}
</style></head><body>
<h1>What each "synced" really promises</h1>
<p>{{.Intro}}</p>
<p>Per subject and definition: the share of flips to "synced" that came while the cache still lacked what
the definition promises (false positives), how late each sound flip came after the cache really held it,
and, for each false one, how old the write the cache lacked already was (each histogram is scaled to its
own tallest bar; hover a bar for its count). A false positive is a <em>measurement</em> of a definition,
not a failure of the run.</p>
<table><tr><th>subject</th><th>definition</th><th>runs</th><th>flips</th><th class="share">false positives</th><th>sound flips: late by</th><th>false flips: the missing write was made</th></tr>
{{range .Rows}}<tr><td>{{.Subject}}</td><td>{{.Signal}}</td><td>{{.Traces}}</td><td>{{.Flips}}</td>
<td><span class="bg"><span class="bar" style="width:{{.ShareWidth}}px"></span></span> {{.Share}} <small>({{.FalsePositives}})</small></td>
<td>{{if .LateBy}}<svg class="late" width="252" height="74" role="img" aria-label="late by, {{len .LateBy}} sound flips">{{range .Late}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Label}}: {{.N}}</title></rect><text x="{{.X}}" y="72">{{.Label}}</text>{{end}}</svg>{{else}}<span class="none">no sound flip</span>{{end}}</td>
<td>{{if .StaleBy}}<svg class="stale" width="252" height="74" role="img" aria-label="stale by, {{len .StaleBy}} false flips">{{range .Stale}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Label}} before the flip: {{.N}}</title></rect><text x="{{.X}}" y="72">{{.Label}}</text>{{end}}</svg>{{else}}<span class="none">no false flip</span>{{end}}</td></tr>
{{end}}</table>
<p>Reproduce with <code>make hassynced</code> (N random plans per subject, N=1000 by default). The guided course:
<a href="course.html">course.html</a>.</p>
</body></html>
`))

// HasSynced writes the HasSynced comparison as one self-contained offline
// HTML page: per subject and definition, the false-positive share as a bar
// and the distributions of how late sound flips came and how stale the
// cache was at false ones, as small histograms drawn in inline SVG. intro
// says what was run. It is a pure function of its input.
func HasSynced(w io.Writer, intro string, stats []SyncDefinitionStats) error {
	page := struct {
		Intro string
		Rows  []hasSyncedRow
	}{Intro: intro}
	for _, s := range stats {
		r := hasSyncedRow{SyncDefinitionStats: s, Share: "-", Late: histogram(s.LateBy), Stale: histogram(s.StaleBy)}
		if s.Flips > 0 {
			frac := float64(s.FalsePositives) / float64(s.Flips)
			r.Share = fmt.Sprintf("%.1f%%", 100*frac)
			r.ShareWidth = int(frac*120 + 0.5)
		}
		page.Rows = append(page.Rows, r)
	}
	var b bytes.Buffer
	if err := hasSyncedTmpl.Execute(&b, page); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
