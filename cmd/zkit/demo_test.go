package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The main job passes its own invariant checks (zkit exits non-zero when
// any fails) and ends with the table.
func TestDemo(t *testing.T) {
	r := zkit(t, "demo", "--workers", "4", "--rounds", "10")
	if r.status != 0 {
		t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	for _, s := range demoSteps {
		if !strings.Contains(r.stdout, "ok   "+s.recipe) {
			t.Errorf("no ok line for %s: %s", s.recipe, s.name)
		}
	}
	if !strings.Contains(r.stdout, "RECIPE") || strings.Count(r.stdout, "held") < len(demoSteps) {
		t.Fatalf("no table with every step held:\n%s", r.stdout)
	}

	// One clock: the lock step's line and the table show the same rate.
	line := regexp.MustCompile(`(?m)^ok   lock .* handoffs, (\d+)/s,`).FindStringSubmatch(r.stdout)
	row := regexp.MustCompile(`(?m)^lock +contention with fenced writes +\d+ +(\d+)/s `).FindStringSubmatch(r.stdout)
	if line == nil || row == nil || line[1] != row[1] {
		t.Fatalf("the lock step's rate: line %q, table %q:\n%s", line, row, r.stdout)
	}
	// The step lines keep their columns: every detail starts at one column.
	col := -1
	for _, l := range strings.Split(r.stdout, "\n") {
		if !strings.HasPrefix(l, "ok   ") {
			continue
		}
		s := demoSteps[slices.IndexFunc(demoSteps, func(s demoStep) bool { return strings.Contains(l, " "+s.name+" ") })]
		at := strings.Index(l, s.name) + len(s.name)
		at += len(l[at:]) - len(strings.TrimLeft(l[at:], " "))
		if col >= 0 && at != col {
			t.Fatalf("details start at column %d and %d:\n%s", col, at, r.stdout)
		}
		col = at
	}
}

// A step name longer than the others' widens the column rather than
// pushing its line out of it.
func TestDemoStepColumns(t *testing.T) {
	saved := demoSteps
	defer func() { demoSteps = saved }()
	demoSteps = []demoStep{{recipe: "lock", name: "short"}, {recipe: "rendezvous", name: "a step name longer than all the others"}}
	a, b := stepColumns(demoSteps[0]), stepColumns(demoSteps[1])
	if len(a) != len(b) || !strings.HasPrefix(a, "lock       short ") {
		t.Fatalf("columns %q and %q", a, b)
	}
}

// Against an external server, the steps that need the embedded server's
// hooks are skipped and the table says so.
func TestDemoExternal(t *testing.T) {
	servers, _, _ := env(t)
	r := zkit(t, "demo", "--servers", servers, "--workers", "2", "--rounds", "3")
	if r.status != 0 {
		t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "skipped: needs the embedded server") {
		t.Fatalf("no skipped step in:\n%s", r.stdout)
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	if r := zkit(t, "demo", "--workers", "1"); r.status != exitUsage {
		t.Fatalf("one worker cannot contend: status %d, want %d", r.status, exitUsage)
	}
}
