package client

import (
	"sync"
	"sync/atomic"
)

// Workers for the wire client's calls.
//
// run hands each blocking call of the wire client to a goroutine of its
// own, so that the caller can return when its context ends. A fresh
// goroutine per call starts on a small stack and grows it inside the wire
// client's request path, every time: with its creation, that was half of
// what the hand-over cost (CPU profile of create+delete, 1 client:
// runtime.newstack 7.5% of the client's CPU, runtime.newproc 2.8%). A
// worker that outlives its call keeps its stack, so the client keeps up to
// maxIdleWorkers of them waiting for the next call, and closes them with the
// client.

// maxIdleWorkers bounds the workers a client keeps waiting between calls;
// a worker that finishes a call when that many wait already exits.
const maxIdleWorkers = 16

// workers runs functions on goroutines that outlive them.
type workers struct {
	mu     sync.Mutex
	idle   []chan func() // each idle worker's hand
	closed bool          // no worker waits any more
	live   atomic.Int32  // workers running or waiting
}

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 && !w.closed {
		hand := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		hand <- f
		return
	}
	w.mu.Unlock()
	w.live.Add(1)
	go w.work(f)
}

// work runs f, then waits as an idle worker for the next function until
// the idle workers are many enough or closed.
func (w *workers) work(f func()) {
	defer w.live.Add(-1)
	var hand chan func()
	for {
		f()
		w.mu.Lock()
		if w.closed || len(w.idle) >= maxIdleWorkers {
			w.mu.Unlock()
			return
		}
		if hand == nil {
			hand = make(chan func(), 1)
		}
		w.idle = append(w.idle, hand)
		w.mu.Unlock()
		var ok bool
		if f, ok = <-hand; !ok {
			return
		}
	}
}

// close ends the idle workers, and the busy ones once their call returns.
func (w *workers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, hand := range w.idle {
		close(hand)
	}
	w.idle = nil
}
