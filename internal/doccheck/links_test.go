package doccheck

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	link = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	code = regexp.MustCompile("`[^`]*`")
)

// scan returns the link targets of a Markdown text and the anchors of its
// headings, as GitHub makes them. Fenced code blocks and code spans hold
// neither.
func scan(text string) (targets []string, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			a := slug(h)
			if n := seen[a]; n > 0 {
				seen[a]++
				a += "-" + strconv.Itoa(n)
			} else {
				seen[a] = 1
			}
			anchors[a] = true
		}
		for _, m := range link.FindAllStringSubmatch(code.ReplaceAllString(line, ""), -1) {
			targets = append(targets, m[1])
		}
	}
	return targets, anchors
}

// slug is a heading's anchor on GitHub: lower case, spaces as hyphens,
// and no punctuation but hyphens and underscores.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every relative link of a document names a file or directory that
// exists, and every anchor in a link to a document a heading there.
func TestDocLinksResolve(t *testing.T) {
	anchorsOf := map[string]map[string]bool{}
	targetsOf := map[string][]string{}
	docs := docFiles(t)
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		targetsOf[doc], anchorsOf[doc] = scan(string(data))
	}
	for _, doc := range docs {
		for _, target := range targetsOf[doc] {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			name := doc
			if file != "" {
				name = path.Clean(path.Join(path.Dir(doc), file))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err != nil {
					t.Errorf("%s: link %q: no such file %s", doc, target, name)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(name, ".md") {
				continue
			}
			anchors, ok := anchorsOf[name]
			if !ok {
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
				if err != nil {
					t.Errorf("%s: link %q: %v", doc, target, err)
					continue
				}
				_, anchors = scan(string(data))
				anchorsOf[name] = anchors
			}
			if !anchors[anchor] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", doc, target, name, anchor)
			}
		}
	}
}

func TestScan(t *testing.T) {
	text := strings.Join([]string{
		"# zkit",
		"## How CMD runs, and stops",
		"## Who holds it: `zkit inspect` and zkit top",
		"## Notes",
		"## Notes",
		"See [the CLI](docs/cli.md#flags) and ![plot](docs/bench.png), not `[x](code.md)`.",
		"```",
		"[y](fenced.md)",
		"# not a heading",
		"```",
	}, "\n")
	targets, anchors := scan(text)
	if strings.Join(targets, " ") != "docs/cli.md#flags docs/bench.png" {
		t.Errorf("targets %q", targets)
	}
	for _, a := range []string{"zkit", "how-cmd-runs-and-stops", "who-holds-it-zkit-inspect-and-zkit-top", "notes", "notes-1"} {
		if !anchors[a] {
			t.Errorf("no anchor %q in %v", a, anchors)
		}
	}
	if anchors["not-a-heading"] {
		t.Error("a fenced line was taken for a heading")
	}
}
