package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var from = regexp.MustCompile(`^<!-- from (\S+) -->$`)

// block is one checked code block of the README.
type block struct {
	source string // the example file, relative to the repository
	line   int    // where the block starts in the README
	lines  []string
}

func readmeBlocks(t *testing.T, readme string) []block {
	t.Helper()
	data, err := os.ReadFile(readme)
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
			t.Fatalf("README.md:%d: %q is not followed by a ```go block", i+1, lines[i])
		}
		b := block{source: m[1], line: i + 3}
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

func TestReadmeExamplesAreExampleTests(t *testing.T) {
	root := filepath.Join("..", "..")
	blocks := readmeBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) < 4 {
		t.Fatalf("only %d checked examples in the README", len(blocks))
	}
	for _, b := range blocks {
		if !strings.HasSuffix(b.source, "_test.go") {
			t.Errorf("README.md:%d: %s is not a test file", b.line, b.source)
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, b.source))
		if err != nil {
			t.Errorf("README.md:%d: %v", b.line, err)
			continue
		}
		if !strings.Contains(string(data), "func Example") {
			t.Errorf("README.md:%d: %s has no Example function", b.line, b.source)
		}
		if !contains(strings.Split(string(data), "\n"), b.lines) {
			t.Errorf("README.md:%d: this example is not a run of lines of %s (edit the Example first, then copy it):\n%s",
				b.line, b.source, strings.Join(b.lines, "\n"))
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
