package main

import "testing"

// The main job passes its own invariant checks (it returns an error, and
// zkit exits non-zero, when any fails).
func TestDemo(t *testing.T) {
	if err := demo([]string{"--workers", "4", "--rounds", "10"}); err != nil {
		t.Fatal(err)
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	if err := demo([]string{"--workers", "1"}); err == nil {
		t.Fatal("one worker cannot contend: want an error")
	}
}
