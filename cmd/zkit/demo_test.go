package main

import (
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
