package recipes

import (
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// connWatch follows one client's connection state on behalf of every held
// thing on that client, through a single subscription: a thousand leases do
// not make a thousand subscribers.
type connWatch struct {
	mu        sync.Mutex
	suspended bool
	since     time.Time
	changed   chan struct{} // closed and replaced at every change
}

var connWatches sync.Map // *client.Client -> *connWatch

// watchConn returns the connection watcher of c, starting it on first use.
// Call it before sending the requests whose success the watcher's state
// will qualify, so that no Suspended event is missed.
func watchConn(c *client.Client) *connWatch {
	if w, ok := connWatches.Load(c); ok {
		return w.(*connWatch)
	}
	w := &connWatch{changed: make(chan struct{})}
	if actual, loaded := connWatches.LoadOrStore(c, w); loaded {
		return actual.(*connWatch)
	}
	sub := c.Subscribe()
	go func() {
		defer connWatches.Delete(c)
		defer sub.Close()
		for ev := range sub.Events() {
			switch ev.State {
			case client.StateSuspended:
				w.set(true)
			case client.StateConnected, client.StateReconnected, client.StateLost, client.StateClosed:
				w.set(false)
			}
		}
	}()
	return w
}

func (w *connWatch) set(suspended bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.suspended == suspended {
		return
	}
	w.suspended = suspended
	w.since = time.Now()
	close(w.changed)
	w.changed = make(chan struct{})
}

// state returns whether the connection is suspended, since when, and a
// channel closed at the next change.
func (w *connWatch) state() (suspended bool, since time.Time, changed <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.suspended, w.since, w.changed
}
