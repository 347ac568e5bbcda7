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
	c         *client.Client
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
	w := &connWatch{c: c, changed: make(chan struct{})}
	if actual, loaded := connWatches.LoadOrStore(c, w); loaded {
		return actual.(*connWatch)
	}
	sub := c.Subscribe()
	go func() {
		defer connWatches.Delete(c)
		defer sub.Close()
		for ev := range sub.Events() {
			if ev.State != client.StateNone {
				// Events arrive a little late: a Suspended event may be
				// read after the reconnect it preceded. Take the state
				// the client is in now, not the one the event names.
				w.refresh()
			}
		}
	}()
	return w
}

// refresh takes the client's current connection state.
func (w *connWatch) refresh() {
	suspended, since := w.c.Suspended()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.suspended == suspended && w.since.Equal(since) {
		return
	}
	w.suspended, w.since = suspended, since
	close(w.changed)
	w.changed = make(chan struct{})
}

// state returns whether the connection is suspended now, since when, and
// a channel closed at the next change.
func (w *connWatch) state() (suspended bool, since time.Time, changed <-chan struct{}) {
	w.refresh()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.suspended, w.since, w.changed
}
