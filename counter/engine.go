package counter

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/zkit-dev/zkit/client"
)

// engine is the state that every Counter of one client, path and encoding
// shares: the queue of calls waiting to be applied, the last value seen,
// and the pace of retries. One goroutine at a time (the flusher) applies
// the queue, so that calls made while a write is in flight are combined
// into the next one.
type engine struct {
	c    *client.Client
	path string
	enc  Encoding

	mu      sync.Mutex
	queue   []*call
	running bool // a flusher is applying calls

	// Only the flusher touches these.
	view view
	pace pacer

	checked    int64           // the czxid of the node found a counter's (see check)
	served     map[string]bool // deltas this engine found applied (delegate.go)
	delegating bool            // the last batch was applied by another writer

	delegated atomic.Int64 // batches applied by other writers, for tests
	applied   atomic.Int64 // other batches' deltas this engine applied, for tests
}

// batch is the calls one flusher round applies together.
type batch struct {
	calls   []*call
	waiting int                // calls whose caller still waits
	cancel  context.CancelFunc // ends the round once nobody waits
}

// engineKey is the client.Local key of an engine: engines live as long
// as their client.
type engineKey struct {
	path string
	enc  Encoding
}

// engineFor returns the engine shared by Counters of c, path and enc,
// creating it on first use.
func engineFor(c *client.Client, path string, enc Encoding) *engine {
	k := engineKey{path, enc}
	if e, ok := c.Local().Load(k); ok {
		return e.(*engine)
	}
	e, _ := c.Local().LoadOrStore(k, &engine{c: c, path: path, enc: enc, served: map[string]bool{}})
	return e.(*engine)
}

// do queues cl and waits for its result. If ctx ends first, a call not yet
// taken into a batch is withdrawn (ctx's error: nothing was sent for it);
// a call already in a batch may still be applied, so its caller gets an
// error matching client.ErrOutcomeUnknown (a get gets ctx's error).
func (e *engine) do(ctx context.Context, cl *call) result {
	if err := ctx.Err(); err != nil {
		return result{err: err}
	}
	cl.done = make(chan struct{})
	cl.waiting = true
	e.mu.Lock()
	e.queue = append(e.queue, cl)
	if !e.running {
		e.running = true
		go e.flush()
	}
	e.mu.Unlock()

	select {
	case <-cl.done:
		return cl.res
	case <-ctx.Done():
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-cl.done: // answered at the same moment: the answer wins
		return cl.res
	default:
	}
	cl.waiting = false
	if cl.batch == nil {
		for i, q := range e.queue {
			if q == cl {
				e.queue = append(e.queue[:i], e.queue[i+1:]...)
				break
			}
		}
		return result{err: ctx.Err()}
	}
	if cl.batch.waiting--; cl.batch.waiting == 0 {
		cl.batch.cancel()
	}
	if cl.kind == opGet {
		return result{err: ctx.Err()}
	}
	return result{err: cl.unknown(e.path, ctx.Err())}
}

// flush applies the queue, one batch per conditional write, until it is
// empty.
func (e *engine) flush() {
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			e.running = false
			e.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		b := &batch{calls: e.queue, waiting: len(e.queue), cancel: cancel}
		e.queue = nil
		for _, cl := range b.calls {
			cl.batch = b
		}
		e.mu.Unlock()

		res := e.apply(ctx, b.calls)
		cancel()
		e.mu.Lock()
		for i, cl := range b.calls {
			cl.res = res[i]
			close(cl.done)
		}
		e.mu.Unlock()
	}
}
