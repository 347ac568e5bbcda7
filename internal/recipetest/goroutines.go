package recipetest

import (
	"runtime"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// WaitGoroutines waits until no more than base goroutines run, and fails t
// with every goroutine's stack if that takes longer than 10 s (scaled).
func WaitGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(10 * time.Second))
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
