// Package docs holds the lab's documentation pages (one Markdown file per
// topic, linked from the README) and the test that keeps their commands and
// Go snippets from going stale.
package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cachelabtest/cli"
)

// maxReadmeLines is the README's budget: a newcomer reads it in ten minutes;
// the rest lives in docs/.
const maxReadmeLines = 250

// page is one Markdown file: README.md or a page under docs/.
type page struct {
	path string
	text string
}

func pages(t *testing.T) []page {
	t.Helper()
	var ps []page
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ps = append(ps, page{"README.md", string(b)})
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, page{"docs/" + f, string(b)})
	}
	return ps
}

// fence is one fenced code block of a page.
type fence struct {
	lang string
	body string
	line int
}

func fences(text string) []fence {
	var fs []fence
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "```") {
			continue
		}
		f := fence{lang: strings.TrimPrefix(l, "```"), line: i + 1}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			body = append(body, lines[i])
		}
		f.body = strings.Join(body, "\n")
		fs = append(fs, f)
	}
	return fs
}

func TestTheReadmeFitsTenMinutes(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, the budget is %d: move a section to docs/ and link it", n, maxReadmeLines)
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// TestLinksResolve checks that every relative link of the README and the
// docs names a file of the repository.
func TestLinksResolve(t *testing.T) {
	for _, p := range pages(t) {
		for _, m := range linkRE.FindAllStringSubmatch(prose(p.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			base := filepath.Dir(filepath.Join("..", p.path))
			if _, err := os.Stat(filepath.Join(base, target)); err != nil {
				t.Errorf("%s: link %q names no file", p.path, target)
			}
		}
	}
}

// TestEveryDocsPageIsLinkedFromTheReadme: a page nobody can reach from the
// README is lost.
func TestEveryDocsPageIsLinkedFromTheReadme(t *testing.T) {
	ps := pages(t)
	readme := ps[0].text
	for _, p := range ps[1:] {
		name := strings.TrimPrefix(p.path, "docs/")
		if !strings.Contains(readme, "(docs/"+name+")") && !strings.Contains(readme, "(docs/"+name+"#") {
			t.Errorf("%s is not linked from README.md", p.path)
		}
	}
}

var makeRE = regexp.MustCompile(`(?:^|[\s(` + "`" + `])make ((?:[A-Z_]+=\S+ )*)([a-z][a-z0-9-]*)`)

func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, ":"); i > 0 && !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, ".") && !strings.Contains(l[:i], "=") && !strings.Contains(l[:i], " ") {
			targets[l[:i]] = true
		}
	}
	return targets
}

// TestDocumentedMakeTargetsExist checks every `make TARGET` written in a
// code block or inline code of the README and the docs.
func TestDocumentedMakeTargetsExist(t *testing.T) {
	targets := makeTargets(t)
	for _, p := range pages(t) {
		for _, m := range makeRE.FindAllStringSubmatch(codeOf(p.text), -1) {
			if !targets[m[2]] {
				t.Errorf("%s: `make %s` names no Makefile target", p.path, m[2])
			}
		}
	}
}

var inlineRE = regexp.MustCompile("`([^`\n]+)`")

// prose returns a page's text without its code (fenced blocks and inline
// code spans), where "](" is Go, not a link.
func prose(text string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(inlineRE.ReplaceAllString(l, ""))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// codeOf returns the text of a page's code: its fenced blocks and inline
// code spans, one per line.
func codeOf(text string) string {
	var b strings.Builder
	for _, f := range fences(text) {
		b.WriteString(f.body)
		b.WriteString("\n")
	}
	for _, m := range inlineRE.FindAllStringSubmatch(text, -1) {
		b.WriteString(m[1])
		b.WriteString("\n")
	}
	return b.String()
}

var cachelabRE = regexp.MustCompile(`(?:go run \./cmd/cachelab|(?:^|[\s$])cachelab) ([a-z]+)((?: [^|;&#\n]*)?)`)
var flagRE = regexp.MustCompile(`(?:^|\s)--?([a-z][a-z0-9-]*)`)

// TestDocumentedCommandsAndFlagsExist checks every cachelab command line
// written in a code block or inline code: its command exists and every flag
// it passes is one of that command's (as its --help lists them).
func TestDocumentedCommandsAndFlagsExist(t *testing.T) {
	helps := map[string]string{}
	help := func(cmd string) (string, bool) {
		if h, ok := helps[cmd]; ok {
			return h, h != ""
		}
		var out, errb bytes.Buffer
		code := cli.Main([]string{cmd, "--help"}, &cli.Env{Stdout: &out, Stderr: &errb, Prog: "cachelab"})
		h := ""
		if code == cli.ExitOK {
			h = out.String()
		}
		helps[cmd] = h
		return h, h != ""
	}
	checked := 0
	for _, p := range pages(t) {
		for _, line := range strings.Split(codeOf(p.text), "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
			for _, m := range cachelabRE.FindAllStringSubmatch(line, -1) {
				cmd, rest := m[1], m[2]
				if !isCommandWord(cmd) {
					continue
				}
				h, ok := help(cmd)
				if !ok {
					t.Errorf("%s: `cachelab %s` is not a command (line %q)", p.path, cmd, line)
					continue
				}
				checked++
				for _, fm := range flagRE.FindAllStringSubmatch(rest, -1) {
					f := fm[1]
					if f == "help" || f == "h" {
						continue
					}
					if !strings.Contains(h, "  -"+f+" ") && !strings.Contains(h, "  -"+f+"\n") && !strings.Contains(h, "--"+f) {
						t.Errorf("%s: `cachelab %s` has no flag --%s (line %q)", p.path, cmd, f, line)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no cachelab command found in the README and docs: the test's patterns are wrong")
	}
}

// isCommandWord tells a cachelab subcommand from prose that follows the
// word "cachelab" in inline code ("cachelab's", a module path).
func isCommandWord(w string) bool {
	switch w {
	case "run", "replay", "report", "list", "explain", "serve", "bench", "merge", "explore", "admin", "version", "hunt":
		return true
	}
	return false
}
