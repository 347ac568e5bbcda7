package client

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Workers run every function; one that finished waits for the next call
// instead of exiting, at most maxIdleWorkers of them wait, and close ends
// them all, the busy ones once their function returns.
func TestWorkers(t *testing.T) {
	var w workers
	idle := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.idle)
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			time.Sleep(time.Millisecond)
		}
	}

	done := make(chan int, 1)
	w.run(func() { done <- 1 })
	require.Equal(t, 1, <-done)
	eventually("the worker waits for the next call", func() bool { return idle() == 1 })
	w.run(func() { done <- 2 })
	require.Equal(t, 2, <-done)
	eventually("the same worker waits again", func() bool { return idle() == 1 })

	// A burst: every function runs, each on its own goroutine (they all
	// wait for release together), and only maxIdleWorkers stay.
	const burst = 3 * maxIdleWorkers
	var started, finished sync.WaitGroup
	release := make(chan struct{})
	started.Add(burst)
	finished.Add(burst)
	for range burst {
		w.run(func() {
			started.Done()
			<-release
			finished.Done()
		})
	}
	started.Wait()
	close(release)
	finished.Wait()
	eventually("the idle workers are bounded", func() bool { return idle() == maxIdleWorkers })
	eventually("the others have exited", func() bool { return w.live.Load() == maxIdleWorkers })

	// A busy worker outlives close until its function returns.
	hold := make(chan struct{})
	w.run(func() { <-hold })
	w.close()
	assert.Zero(t, idle())
	close(hold)
	w.run(func() { done <- 3 }) // after close: a goroutine of its own, which exits
	require.Equal(t, 3, <-done)
	eventually("every worker has exited", func() bool { return w.live.Load() == 0 })
}
