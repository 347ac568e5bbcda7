package counter

import "github.com/zkit-dev/zkit/client"

// Queued returns how many calls of Counters of c and path (Long encoding)
// wait in the queue behind the write in flight: tests order their calls
// with it instead of sleeping.
func Queued(c *client.Client, path string) int {
	e := engineFor(c, path, Long)
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue)
}

// Flushing reports whether a write of c and path's engine is in flight.
func Flushing(c *client.Client, path string) bool {
	e := engineFor(c, path, Long)
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running
}

// Delegated returns how many batches of c's engine for path (Long
// encoding) other writers applied.
func Delegated(c *client.Client, path string) int64 {
	return engineFor(c, path, Long).delegated.Load()
}

// Applied returns how many other batches' deltas c's engine for path
// (Long encoding) applied.
func Applied(c *client.Client, path string) int64 {
	return engineFor(c, path, Long).applied.Load()
}

// Czxid returns the czxid of the node as c's engine for path (Long
// encoding) knows it; call it once the flusher has stopped.
func Czxid(c *client.Client, path string) int64 {
	e := engineFor(c, path, Long)
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.view.czxid
}
