package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var from = regexp.MustCompile(`^<!-- from (\S+) -->$`)

// block is one checked code block of a document.
type block struct {
	doc    string // the document, relative to the repository
	source string // the example file, relative to the repository
	line   int    // where the block starts in the document
	lines  []string
}

func docBlocks(t *testing.T, doc string) []block {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []block
	for i := 0; i+1 < len(lines); i++ {
		m := from.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if lines[i+1] != "```go" {
			t.Fatalf("%s:%d: %q is not followed by a ```go block", doc, i+1, lines[i])
		}
		b := block{doc: doc, source: m[1], line: i + 3}
		for j := i + 2; j < len(lines) && lines[j] != "```"; j++ {
			b.lines = append(b.lines, lines[j])
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// dedent strips the indentation common to the non-empty lines.
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return out
}

// contains reports whether the lines of block stand, in a row and
// re-indented alike, in source.
func contains(source []string, block []string) bool {
	want := strings.Join(dedent(block), "\n")
	for i := 0; i+len(block) <= len(source); i++ {
		if strings.Join(dedent(source[i:i+len(block)]), "\n") == want {
			return true
		}
	}
	return false
}

func TestDocExamplesAreExampleTests(t *testing.T) {
	var blocks []block
	for _, doc := range docFiles(t) {
		found := docBlocks(t, doc)
		if doc == "README.md" && len(found) == 0 {
			t.Error("no checked example in the README")
		}
		blocks = append(blocks, found...)
	}
	if len(blocks) < 4 {
		t.Fatalf("only %d checked examples in the documents", len(blocks))
	}
	for _, b := range blocks {
		if !strings.HasSuffix(b.source, "_test.go") {
			t.Errorf("%s:%d: %s is not a test file", b.doc, b.line, b.source)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, b.source))
		if err != nil {
			t.Errorf("%s:%d: %v", b.doc, b.line, err)
			continue
		}
		if !strings.Contains(string(data), "func Example") {
			t.Errorf("%s:%d: %s has no Example function", b.doc, b.line, b.source)
		}
		if !contains(strings.Split(string(data), "\n"), b.lines) {
			t.Errorf("%s:%d: this example is not a run of lines of %s (edit the Example first, then copy it):\n%s",
				b.doc, b.line, b.source, strings.Join(b.lines, "\n"))
		}
	}
}

func TestContains(t *testing.T) {
	src := []string{"func ExampleX() {", "\ta := 1", "\tif a > 0 {", "\t\tb()", "\t}", "}"}
	if !contains(src, []string{"if a > 0 {", "\tb()", "}"}) {
		t.Fatal("a re-indented run was not found")
	}
	if contains(src, []string{"a := 1", "b()"}) {
		t.Fatal("lines that are not in a row were found")
	}
	if contains(src, []string{"a := 2"}) {
		t.Fatal("a changed line was found")
	}
}
