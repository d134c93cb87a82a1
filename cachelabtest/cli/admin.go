package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cachelab/cachelab/fakeapi/serve"
)

// adminUsage is `cachelab admin`'s usage line and example (in the command
// table).
const (
	adminUsage   = "compact|fault|snapshot|close-watches [flags] [field=value ...]"
	adminExample = "cachelab admin fault errorRate=0.1 errorCode=429 retryAfterSeconds=1   # change fields of the live profile\n" +
		"  cachelab admin fault --reset eventDelay=250ms                  # replace it\n" +
		"  cachelab admin fault                                           # print it\n" +
		"  cachelab admin compact [--resource-version N]                  # etcd-style compaction: older watches and lists get 410\n" +
		"  cachelab admin snapshot -o state.json                          # resourceVersions, open watches, every object\n" +
		"  cachelab admin close-watches [--abrupt]"
)

// adminTimeout bounds one admin request.
const adminTimeout = 30 * time.Second

// adminCmd calls one of `cachelab serve`'s admin endpoints, found through a
// kubeconfig (server address, CA, bearer token).
func adminCmd(env *Env, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(env.Stderr, "cachelab admin: say what to do: compact, fault, snapshot or close-watches\nRun `%s admin --help` for examples.\n", env.Prog)
		return ExitUsage
	}
	sub, args := args[0], args[1:]
	fs, o := adminFlags("admin " + sub)
	var (
		kubeconfig, rv, reset, file, out, abrupt = o.kubeconfig, o.rv, o.reset, o.file, o.out, o.abrupt
		handler                                  func(*adminClient, []string) error
	)
	switch sub {
	case "compact":
		handler = func(c *adminClient, pos []string) error {
			if len(pos) != 0 {
				return usageErr{fmt.Errorf("compact takes no arguments, got %q", pos)}
			}
			return adminCompact(env, c, *rv)
		}
	case "fault", "faults":
		handler = func(c *adminClient, pos []string) error { return adminFault(env, c, pos, *reset, *file) }
	case "snapshot":
		handler = func(c *adminClient, pos []string) error {
			if len(pos) != 0 {
				return usageErr{fmt.Errorf("snapshot takes no arguments, got %q", pos)}
			}
			return adminSnapshot(env, c, *out)
		}
	case "close-watches":
		handler = func(c *adminClient, pos []string) error {
			if len(pos) != 0 {
				return usageErr{fmt.Errorf("close-watches takes no arguments, got %q", pos)}
			}
			return adminCloseWatches(env, c, *abrupt)
		}
	default:
		fmt.Fprintf(env.Stderr, "cachelab admin: unknown action %q (known: compact, fault, snapshot, close-watches)\nRun `%s admin --help` for examples.\n", sub, env.Prog)
		return ExitUsage
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(env, "admin "+sub, fs, err)
	}
	c, err := newAdminClient(*kubeconfig)
	if err != nil {
		printErr(env, "admin "+sub, err)
		return ExitUsage
	}
	if err := handler(c, pos); err != nil {
		printErr(env, "admin "+sub, err)
		var u usageErr
		if errors.As(err, &u) {
			return ExitUsage
		}
		return ExitUnexpected
	}
	return ExitOK
}

// adminOptions are the flags of `cachelab admin`'s actions.
type adminOptions struct {
	kubeconfig, file, out *string
	rv                    *int64
	reset, abrupt         *bool
}

// adminFlags is the flag set of `cachelab admin` (every action's flags;
// each says which action it is for).
func adminFlags(name string) (*flag.FlagSet, adminOptions) {
	fs := newFlagSet(name)
	return fs, adminOptions{
		kubeconfig: fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cachelab serve to talk to (default $KUBECONFIG)"),
		rv:         fs.Int64("resource-version", 0, "compact: compact to this resourceVersion (default: the latest)"),
		reset:      fs.Bool("reset", false, "fault: start from an empty profile instead of the live one"),
		file:       fs.String("f", "", "fault: read the profile from this JSON file (\"-\" = stdin) instead of field=value"),
		out:        fs.String("o", "", "snapshot: write the JSON here instead of stdout"),
		abrupt:     fs.Bool("abrupt", false, "close-watches: reset the streams instead of ending them cleanly"),
	}
}

// usageErr marks an error in the command line (exit ExitUsage).
type usageErr struct{ error }

func (u usageErr) Unwrap() error { return u.error }

// adminClient talks HTTPS to one cachelab serve with a kubeconfig's CA and
// token.
type adminClient struct {
	host string
	hc   *http.Client
}

// newAdminClient reads the kubeconfig at path (its current context).
func newAdminClient(path string) (*adminClient, error) {
	if path == "" {
		return nil, errors.New("no kubeconfig: give --kubeconfig FILE or set $KUBECONFIG (cachelab serve prints the export line)")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w (give the one `cachelab serve` wrote, by default out/serve/kubeconfig)", path, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return &adminClient{host: strings.TrimSuffix(cfg.Host, "/"), hc: &http.Client{Transport: rt, Timeout: adminTimeout}}, nil
}

// do sends one request and decodes a 2xx JSON answer into out; other
// answers become errors carrying the server's Status message.
func (c *adminClient) do(method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.host+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the server at %s: %w\nIs `cachelab serve` running, and is this its kubeconfig?", c.host, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var st struct {
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &st) == nil && st.Message != "" {
			msg = st.Message
		}
		if resp.StatusCode == http.StatusNotFound && !strings.Contains(msg, "/admin/") {
			return fmt.Errorf("%s %s: 404: the server at %s has no admin endpoints; is it `cachelab serve`?", method, path, c.host)
		}
		return fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, msg)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: the answer is not what cachelab serve sends: %w", method, path, err)
		}
	}
	return nil
}

func adminCompact(env *Env, c *adminClient, rv int64) error {
	path := "/admin/compact"
	if rv > 0 {
		path += "?resourceVersion=" + strconv.FormatInt(rv, 10)
	} else if rv < 0 {
		return usageErr{fmt.Errorf("--resource-version must not be negative, got %d", rv)}
	}
	var got struct {
		Compacted int64 `json:"compactedResourceVersion"`
		Latest    int64 `json:"resourceVersion"`
	}
	if err := c.do(http.MethodPost, path, nil, &got); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "compacted to resourceVersion %d (latest %d): watches and lists from older resourceVersions now get 410 Gone\n", got.Compacted, got.Latest)
	return nil
}

// faultFields are the JSON names of serve.Faults' fields, for messages.
func faultFields() []string {
	data, _ := json.Marshal(serve.Faults{ErrorRate: 1, ErrorCode: 1, RetryAfterSeconds: 1, ApplyThenTimeoutRate: 1,
		EventDelay: 1, ReplicaLag: 1, WatchBreakInterval: 1, WatchBreakAbrupt: true, Seed: 1})
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return slices.Sorted(maps.Keys(m))
}

// adminFault prints the live fault profile, or changes it: from a file, or
// field=value pairs over the live profile (over an empty one with reset).
// The new profile is checked here first (serve.ParseFaults), so an unknown
// field or a bad value is named before anything is sent.
func adminFault(env *Env, c *adminClient, pairs []string, reset bool, file string) error {
	var body []byte
	switch {
	case file != "" && len(pairs) > 0:
		return usageErr{errors.New("give either -f FILE or field=value pairs, not both")}
	case file != "":
		var err error
		if file == "-" {
			body, err = io.ReadAll(os.Stdin)
		} else {
			body, err = os.ReadFile(file)
		}
		if err != nil {
			return usageErr{fmt.Errorf("fault profile: %w", err)}
		}
	case len(pairs) > 0 || reset:
		profile := map[string]any{}
		if !reset {
			var live map[string]any
			if err := c.do(http.MethodGet, "/admin/faults", nil, &live); err != nil {
				return err
			}
			profile = live
		}
		known := map[string]bool{}
		for _, f := range faultFields() {
			known[f] = true
		}
		for _, p := range pairs {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return usageErr{fmt.Errorf("%q: want field=value (fields: %s)", p, strings.Join(faultFields(), ", "))}
			}
			if !known[k] {
				return usageErr{fmt.Errorf("unknown fault field %q%s (fields: %s)", k, suggestField(k), strings.Join(faultFields(), ", "))}
			}
			val, err := faultValue(k, v)
			if err != nil {
				return usageErr{err}
			}
			profile[k] = val
		}
		body, _ = json.Marshal(profile)
	default:
		var live serve.Faults
		if err := c.do(http.MethodGet, "/admin/faults", nil, &live); err != nil {
			return err
		}
		return printJSON(env.Stdout, live)
	}
	if _, err := serve.ParseFaults(body); err != nil {
		return usageErr{err}
	}
	var now serve.Faults
	if err := c.do(http.MethodPut, "/admin/faults", body, &now); err != nil {
		return err
	}
	return printJSON(env.Stdout, now)
}

// faultValue parses the value of fault field k given on the command line
// as that field's type wants it, so that a mistake is named before
// anything is sent: a duration needs its unit ("eventDelay=5" would be 5ns
// in JSON), a rate is a number, a flag is true or false.
func faultValue(k, v string) (any, error) {
	f, ok := reflect.TypeOf(serve.Faults{}).FieldByNameFunc(func(name string) bool {
		sf, _ := reflect.TypeOf(serve.Faults{}).FieldByName(name)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		return tag == k
	})
	if !ok {
		return nil, fmt.Errorf("unknown fault field %q", k)
	}
	if f.Type == reflect.TypeOf(serve.Duration(0)) {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want a duration with its unit, such as %s=250ms or %s=2s", k, v, k, k)
		}
		return d.String(), nil
	}
	switch f.Type.Kind() {
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want a number, such as %s=0.1", k, v, k)
		}
		return x, nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want a whole number, such as %s=3", k, v, k)
		}
		return x, nil
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		x, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want a whole number, 0 or more", k, v)
		}
		return x, nil
	case reflect.Bool:
		x, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: want true or false", k, v)
		}
		return x, nil
	}
	var val any
	if json.Unmarshal([]byte(v), &val) != nil {
		val = v
	}
	return val, nil
}

// suggestField names a field that differs from k only in case.
func suggestField(k string) string {
	for _, f := range faultFields() {
		if strings.EqualFold(f, k) {
			return fmt.Sprintf(" (did you mean %s?)", f)
		}
	}
	return ""
}

func adminSnapshot(env *Env, c *adminClient, out string) error {
	var snap serve.Snapshot
	if err := c.do(http.MethodGet, "/admin/snapshot", nil, &snap); err != nil {
		return err
	}
	if out == "" {
		return printJSON(env.Stdout, snap)
	}
	var buf bytes.Buffer
	if err := printJSON(&buf, snap); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	kinds := map[string]int{}
	for _, o := range snap.Objects {
		var tm struct{ Kind string }
		_ = json.Unmarshal(o, &tm)
		kinds[tm.Kind]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	sort.Strings(parts)
	fmt.Fprintf(env.Stdout, "wrote %s: resourceVersion %d (compacted %d), %d open watches, %d objects (%s)\n",
		out, snap.ResourceVersion, snap.CompactedResourceVersion, len(snap.Watchers), len(snap.Objects), strings.Join(parts, ", "))
	return nil
}

func adminCloseWatches(env *Env, c *adminClient, abrupt bool) error {
	path := "/admin/close-watches"
	if abrupt {
		path += "?abrupt=true"
	}
	var got struct {
		Closed int `json:"closed"`
	}
	if err := c.do(http.MethodPost, path, nil, &got); err != nil {
		return err
	}
	how := "cleanly"
	if abrupt {
		how = "abruptly (stream reset)"
	}
	fmt.Fprintf(env.Stdout, "closed %d watches %s\n", got.Closed, how)
	return nil
}

func printJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
