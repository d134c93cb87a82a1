package reports

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/cachelab/cachelab/invariants"
	"github.com/cachelab/cachelab/sim"
)

// assets are the page's stylesheet, script and templates, inlined into
// every page so that it opens offline.
//
//go:embed assets
var assets embed.FS

func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic("reports: missing embedded asset " + name) // a build defect, not an input error
	}
	return string(b)
}

var funcs = template.FuncMap{
	"css":   func(s string) template.CSS { return template.CSS(s) },
	"js":    func(s string) template.JS { return template.JS(s) },
	"asset": asset,
}

var (
	reportTmpl = template.Must(template.New("report.html").Funcs(funcs).ParseFS(assets, "assets/report.html"))
	indexTmpl  = template.Must(template.New("index.html").Funcs(funcs).ParseFS(assets, "assets/index.html"))
)

// pageRec is one trace record as the page's script reads it: short keys,
// strings as indexes into pageData.Strings (0 is ""), objects of cache and
// final snapshots as indexes into pageData.Objects. Zero fields are
// omitted.
type pageRec struct {
	Pos       int             `json:"p,omitempty"` // only when it differs from the index
	At        int64           `json:"t"`
	Kind      int             `json:"k"`
	Lane      int             `json:"l,omitempty"` // lane index + 1; 0 = no lane
	Actor     int             `json:"a,omitempty"`
	Verb      int             `json:"vb,omitempty"`
	Resource  int             `json:"r,omitempty"`
	Namespace int             `json:"n,omitempty"`
	Name      int             `json:"nm,omitempty"`
	UID       int             `json:"u,omitempty"`
	RV        int64           `json:"rv,omitempty"`
	OldUID    int             `json:"ou,omitempty"`
	OldRV     int64           `json:"orv,omitempty"`
	Owner     int             `json:"ow,omitempty"`
	Object    json.RawMessage `json:"o,omitempty"`
	ByGC      bool            `json:"gc,omitempty"`
	Code      int             `json:"c,omitempty"`
	Reason    int             `json:"rs,omitempty"`
	Lag       int64           `json:"lg,omitempty"`
	Count     int             `json:"ct,omitempty"`
	Watcher   int             `json:"w,omitempty"`
	WatchList bool            `json:"wl,omitempty"`
	EventType int             `json:"e,omitempty"`
	Initial   bool            `json:"in,omitempty"`
	Tombstone bool            `json:"ts,omitempty"`
	Handler   int             `json:"h,omitempty"`
	Signal    int             `json:"s,omitempty"`
	Value     bool            `json:"v,omitempty"`
	Op        int             `json:"op,omitempty"`
	Key       int             `json:"ky,omitempty"`
	Result    int             `json:"re,omitempty"`
	Step      int             `json:"st,omitempty"`
	Fault     int             `json:"f,omitempty"`
	Breaking  bool            `json:"cb,omitempty"`
	Objects   []int           `json:"os,omitempty"`
	Detail    int             `json:"d,omitempty"`
	// StepText describes the plan step of a step record, from the Plan.
	StepText int `json:"sd,omitempty"`
}

// pageData is the JSON the page's script renders.
type pageData struct {
	Version  int           `json:"version"`
	Subject  string        `json:"subject"`
	End      int64         `json:"end"`
	Mode     string        `json:"mode"`
	Strings  []string      `json:"S"`
	Lanes    []lane        `json:"lanes"`
	Records  []pageRec     `json:"recs"`
	Objects  [][]int64     `json:"objs"`
	Verdicts []pageVerdict `json:"verdicts"`
	Failure  int           `json:"failure"`
	Legend   []legendLane  `json:"-"`
}

type pageVerdict struct {
	Invariant string            `json:"name"`
	Status    invariants.Status `json:"status"`
	Positions []int             `json:"pos"`
}

// legendLane is a lane kind's explanation for the legend.
type legendLane struct {
	Name, Help string
}

// interner numbers strings for pageData.Strings.
type interner struct {
	index   map[string]int
	strings []string
}

func (in *interner) id(s string) int {
	if s == "" {
		return 0
	}
	if i, ok := in.index[s]; ok {
		return i
	}
	i := len(in.strings)
	in.index[s] = i
	in.strings = append(in.strings, s)
	return i
}

// buildPage turns a trace into the page's data.
func buildPage(run Run, fail *failureView) (pageData, error) {
	t := run.Trace
	subject := ""
	if p := run.plan(); p != nil {
		subject = p.Subject
	}
	lp := planLanes(t, subject)
	in := &interner{index: map[string]int{"": 0}, strings: []string{""}}
	objIndex := map[string]int{}
	pd := pageData{
		Version: 1, Subject: subject, End: int64(t.End), Lanes: lp.lanes,
		Records: make([]pageRec, len(t.Records)), Failure: -1,
		Objects: [][]int64{},
	}
	if fail != nil {
		pd.Failure = fail.Pos
	}
	times := map[sim.Duration]bool{}
	var last int64
	for i := range t.Records {
		r := &t.Records[i]
		pr := pageRec{
			At: int64(r.At), Kind: in.id(string(r.Kind)), Lane: lp.of[i] + 1,
			Actor: in.id(r.Actor), Verb: in.id(r.Verb), Resource: in.id(r.Resource),
			Namespace: in.id(r.Namespace), Name: in.id(r.Name), UID: in.id(r.UID), RV: r.RV,
			OldUID: in.id(r.OldUID), OldRV: r.OldRV, Owner: in.id(r.Owner), ByGC: r.ByGC,
			Code: r.Code, Reason: in.id(r.Reason), Lag: r.Lag, Count: r.Count,
			Watcher: in.id(r.Watcher), WatchList: r.WatchList, EventType: in.id(r.EventType),
			Initial: r.Initial, Tombstone: r.Tombstone, Handler: in.id(r.Handler),
			Signal: in.id(r.Signal), Value: r.Value, Op: in.id(r.Op), Key: in.id(r.Key),
			Result: in.id(r.Result), Step: r.Step, Fault: in.id(r.Fault),
			Breaking: r.ContractBreaking, Detail: in.id(r.Detail),
		}
		if r.Pos != i {
			pr.Pos = r.Pos
		}
		if p := run.plan(); r.Kind == sim.RecStep && p != nil && r.Step >= 0 && r.Step < len(p.Steps) {
			pr.StepText = in.id(describeStep(p.Steps[r.Step]))
		}
		if len(r.Object) > 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, r.Object); err != nil {
				return pd, fmt.Errorf("reports: record #%d (%s): object is not valid JSON: %v", i, r.Kind, err)
			}
			pr.Object = b.Bytes()
		}
		for _, o := range r.Objects {
			term := int64(0)
			if o.Terminating {
				term = 1
			}
			row := []int64{int64(in.id(o.Resource)), int64(in.id(o.Namespace)), int64(in.id(o.Name)),
				int64(in.id(o.UID)), o.RV, term, int64(in.id(strings.Join(o.Finalizers, ","))), int64(in.id(o.Owner))}
			k := fmt.Sprint(row)
			oi, ok := objIndex[k]
			if !ok {
				oi = len(pd.Objects)
				objIndex[k] = oi
				pd.Objects = append(pd.Objects, row)
			}
			pr.Objects = append(pr.Objects, oi)
		}
		pd.Records[i] = pr
		times[r.At] = true
		if int64(r.At) > last {
			last = int64(r.At)
		}
	}
	if pd.End < last {
		pd.End = last
	}
	pd.Strings = in.strings
	// Records piled on few instants (no latency: synctest runs everything
	// at once) read better in trace order than on a time axis.
	pd.Mode = "time"
	if len(t.Records) > 20 && len(times)*4 < len(t.Records) {
		pd.Mode = "order"
	}
	for _, v := range run.Verdicts {
		ps := v.Positions
		if ps == nil {
			ps = []int{}
		}
		pd.Verdicts = append(pd.Verdicts, pageVerdict{Invariant: v.Invariant, Status: v.Status, Positions: ps})
	}
	if pd.Verdicts == nil {
		pd.Verdicts = []pageVerdict{}
	}
	seen := map[laneKind]bool{}
	for _, l := range lp.lanes {
		if !seen[l.kind] {
			seen[l.kind] = true
			pd.Legend = append(pd.Legend, legendLane{Name: laneLegendName(l), Help: l.Help})
		}
	}
	return pd, nil
}

func laneLegendName(l lane) string {
	switch l.kind {
	case laneWatch:
		return "watch …"
	case laneHandler:
		return "handler …"
	case laneCache:
		return "cache …"
	case laneSignal:
		return "sync signals (HasSynced, …)"
	}
	return l.Label
}

// reportPage is the template's input.
type reportPage struct {
	Title    string
	Scenario string
	Subject  string
	Seed     uint64
	End      string
	Outcome  string
	Records  int
	Status   invariants.Status
	Replay   string
	Verdicts []verdictView
	Failure  *failureView
	PlanJSON string
	Data     template.JS
	Legend   []legendLane
	// Metrics are client-go's own metrics of the run, drawn per queue or
	// informer.
	Metrics []metricGroup
}

type verdictView struct {
	invariants.Verdict
	// Label is pass, fail, unknown or n/a; sound or unsound for a
	// measurement. Class is its CSS class.
	Label, Class string
	// FirstMeasure marks the first measurement in the list (a heading
	// goes before it).
	FirstMeasure bool
	Index        int
	Shown        []int // the positions linked inline (the first few)
	More         int   // how many more positions there are
	// Accepted, on a failure the controller's team accepts
	// (Run.Accepted), is their reason.
	Accepted string
}

// maxInlinePositions is how many positions a verdict links inline.
const maxInlinePositions = 8

// HTML writes a run as one self-contained offline HTML page: the verdicts
// with links to the trace positions that prove them, the cache-vs-server
// difference at the first failure, a zoomable timeline with a lane per
// actor, a searchable trace table, the plan and the replay command. The
// page needs no network: styles, script and data are inlined. It is a pure
// function of run; Run.Trace is required.
func HTML(w io.Writer, run Run) error {
	if run.Trace == nil {
		return ErrNoTrace
	}
	t := run.Trace
	fail := firstFailure(t, run.Verdicts)
	pd, err := buildPage(run, fail)
	if err != nil {
		return err
	}
	data, err := json.Marshal(pd) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("reports: encoding page data: %w", err)
	}
	page := reportPage{
		Title: run.title(), End: t.End.String(), Outcome: t.Outcome, Records: len(t.Records),
		Status: OverallStatus(run.Verdicts), Replay: run.ReplayCommand, Failure: fail,
		Data: template.JS(data), Legend: pd.Legend, Metrics: metricGroups(t),
	}
	if p := run.plan(); p != nil {
		page.Scenario, page.Subject, page.Seed = p.Name, p.Subject, p.Seed
		b, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return fmt.Errorf("reports: encoding plan: %w", err)
		}
		page.PlanJSON = string(b)
	}
	for i, v := range run.Verdicts {
		vv := verdictView{Verdict: v, Label: displayLabel(v), Index: i, Shown: v.Positions}
		vv.Class = labelClass(vv.Label)
		if reason, ok := run.Accepted[v.Invariant]; ok && v.Failed() {
			vv.Accepted = reason
		}
		if len(vv.Shown) > maxInlinePositions {
			vv.Shown, vv.More = vv.Shown[:maxInlinePositions], len(vv.Shown)-maxInlinePositions
		}
		page.Verdicts = append(page.Verdicts, vv)
	}
	// Failures first, then what could not decide, then passes; the
	// measurements last, the unsound ones first.
	sort.SliceStable(page.Verdicts, func(i, j int) bool {
		return verdictRank(page.Verdicts[i].Verdict) < verdictRank(page.Verdicts[j].Verdict)
	})
	for i := range page.Verdicts {
		if page.Verdicts[i].Label == "unsound" || page.Verdicts[i].Label == "sound" || page.Verdicts[i].Measurement || invariants.IsMeasurement(page.Verdicts[i].Invariant) {
			page.Verdicts[i].FirstMeasure = true
			break
		}
	}
	var b bytes.Buffer
	if err := reportTmpl.Execute(&b, page); err != nil {
		return fmt.Errorf("reports: rendering HTML: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

// verdictRank orders the report's verdict list.
func verdictRank(v invariants.Verdict) int {
	r := map[invariants.Status]int{invariants.Fail: 0, invariants.Unknown: 1, invariants.Pass: 2}[v.Status]
	if v.Measurement || invariants.IsMeasurement(v.Invariant) {
		r += 10
	}
	return r
}

// describeStep says what a plan step does in a few words, for the step's
// label: "create configmaps default/c5", "disconnect pods of naivecache".
func describeStep(st sim.Step) string {
	parts := []string{st.Op}
	obj := st.Name
	if st.Namespace != "" && obj != "" {
		obj = st.Namespace + "/" + obj
	}
	if st.Resource != "" {
		parts = append(parts, shortResource(st.Resource))
	} else if obj == "" && len(st.Object) > 0 {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if json.Unmarshal(st.Object, &m) == nil {
			parts = append(parts, strings.ToLower(m.Kind))
			obj = m.Metadata.Name
			if m.Metadata.Namespace != "" && obj != "" {
				obj = m.Metadata.Namespace + "/" + obj
			}
		}
	}
	if obj != "" {
		parts = append(parts, obj)
	}
	if st.Target != "" {
		parts = append(parts, "of "+st.Target)
	}
	if st.Code != 0 {
		parts = append(parts, fmt.Sprintf("with %d", st.Code))
	}
	if st.Verb != "" {
		parts = append(parts, "on "+st.Verb)
	}
	if st.Lag != 0 {
		parts = append(parts, fmt.Sprintf("lag %d", st.Lag))
	}
	if st.For != 0 {
		parts = append(parts, "for "+st.For.String())
	}
	return strings.Join(parts, " ")
}
