package counter

import (
	"testing"
	"time"
)

// TestBackoffAges checks the two halves of the pacing rule: the window
// grows with conflicts up to maxWindow, and a batch that has waited long
// waits far less than a fresh one, so that the writer who keeps winning
// (it writes without reading) cannot starve the others.
func TestBackoffAges(t *testing.T) {
	var p pacer
	prev := time.Duration(0)
	for i := 0; i < 20; i++ {
		w := p.backoff(0)
		if w < p.window/2 || w > p.window {
			t.Fatalf("conflict %d: wait %v outside [%v, %v]", i, w, p.window/2, p.window)
		}
		if p.window < prev {
			t.Fatalf("conflict %d: window shrank from %v to %v", i, prev, p.window)
		}
		prev = p.window
	}
	if p.window != maxWindow {
		t.Fatalf("window after 20 conflicts = %v, want %v", p.window, maxWindow)
	}
	for _, waited := range []time.Duration{8 * time.Millisecond, 30 * time.Millisecond, time.Second} {
		bound := time.Duration(float64(maxWindow) / (1 + float64(waited)/float64(ageScale)))
		for i := 0; i < 100; i++ {
			if w := p.backoff(waited); w > bound || w < bound/2-1 {
				t.Fatalf("after waiting %v: wait %v outside [%v, %v]", waited, w, bound/2, bound)
			}
		}
	}
	if bound := p.backoff(30 * time.Millisecond); bound > maxWindow/10 {
		t.Fatalf("a batch that waited 30 ms waits %v, more than a tenth of the window", bound)
	}
	for i := 0; i < 20; i++ {
		p.won()
	}
	if p.window > minWindow {
		t.Fatalf("window after 20 successes = %v, want it back near zero", p.window)
	}
}
