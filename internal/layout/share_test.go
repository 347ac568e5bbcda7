package layout

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/sharing.txt from the registry")

// The registry's outcome for every pair of recipes on one path is the one
// in testdata/sharing.txt: a change to a layout that changes what a recipe
// refuses, or adds a gap, shows there, with the reason, for review. Run
// with -update to rewrite it after such a change (a new recipe's pairs,
// say); the chaos test checks every pair against the real recipes.
func TestSharing(t *testing.T) {
	var b strings.Builder
	fmt.Fprintln(&b, "# What a second recipe meets on a path a first one uses (layout.Recipe.Beside).")
	fmt.Fprintln(&b, "# Generated from the registry: go test ./internal/layout -run TestSharing -update")
	for _, first := range All {
		if first.Leaves == 0 {
			continue // it leaves nothing on its path
		}
		for _, second := range All {
			if second == first {
				continue
			}
			got, why := second.Beside(first)
			fmt.Fprintf(&b, "%s > %s: %v", first.Name, second.Name, got)
			if got == Gap {
				fmt.Fprintf(&b, ": %s", why)
			}
			fmt.Fprintln(&b)
		}
	}
	const golden = "testdata/sharing.txt"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("the registry's outcomes differ from %s (run with -update once the change is meant):\n%s", golden, diff(string(want), got))
	}
}

// diff lists the lines of got that are not in want, and the other way.
func diff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var out []string
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
