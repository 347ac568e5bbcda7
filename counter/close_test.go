package counter_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The client is closed while an Add waits for a partitioned server: the
// Add returns promptly, and leaves no goroutine behind.
func TestCloseWhileAddBlocks(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		opts, cut, _ := b.Blackhole(t)
		c, err := client.Connect(ctx, b.Servers, append(opts, client.WithSessionTimeout(zktest.Scale(20*time.Second)))...)
		if err != nil {
			t.Fatal(err)
		}
		path := counterPath(t)
		k := counter.New(c, path)
		if _, err := k.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		flusherStopped(t, c, path)
		cut()
		done := make(chan error, 1)
		go func() { _, err := k.Add(ctx, 1); done <- err }()
		recipetest.Eventually(t, "the Add is being written", func() bool {
			return counter.Flushing(c, path) && counter.Queued(c, path) == 0
		})
		c.Close()
		select {
		case err := <-done:
			if err == nil || !(errors.Is(err, client.ErrClosed) || client.IsOutcomeUnknown(err)) {
				t.Errorf("Add after Close = %v, want ErrClosed or outcome unknown", err)
			}
		case <-time.After(zktest.Scale(5 * time.Second)):
			buf := make([]byte, 1<<20)
			t.Fatalf("Add still blocked 5s after Close:\n%s", buf[:runtime.Stack(buf, true)])
		}
		// The client's own goroutines may wait out the partition; none of
		// the counter's may.
		counterGoroutines := func() string {
			buf := make([]byte, 1<<20)
			var left []string
			for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
				if strings.Contains(g, "zkit/counter.") && !strings.Contains(g, "counter_test.TestCloseWhileAddBlocks") {
					left = append(left, g)
				}
			}
			return strings.Join(left, "\n\n")
		}
		deadline := time.Now().Add(zktest.Scale(5 * time.Second))
		for counterGoroutines() != "" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if left := counterGoroutines(); left != "" {
			t.Fatalf("counter goroutines left after Close:\n%s", left)
		}
	})
}
