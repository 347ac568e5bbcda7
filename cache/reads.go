package cache

import (
	"context"
	"slices"

	"github.com/zkit-dev/zkit/client"
)

// The cache's reads go through its client's calls, a few at a time on
// goroutines of their own (maxReads), so that a load does not wait a round
// trip per node; their results come back to the engine's goroutine, which
// alone keeps the image. Reads of one path go one after the other: a read
// of a path is sent once the one before it has been answered, and applied
// after it, so that an older answer never overwrites a newer one.
//
// Under a persistent watch, the nodes a listing shows that the image does
// not hold are read together, up to maxBatch in one MultiRead (ZooKeeper
// 3.6+, as persistent watches are): a directory of leaves loads in a
// request or two instead of a request per leaf. A batch whose reply is
// longer than the client reads (large data) is read again in halves.

// maxReads bounds the reads a cache has under way at once.
const maxReads = 64

// maxBatch bounds the nodes one MultiRead of a load reads.
const maxBatch = 128

// readOp is what a read asks for.
type readOp uint8

const (
	readData     readOp = iota + 1 // the node's data and Stat
	readChildren                   // its children's names and Stat
	readExists                     // whether it exists (one-shot mode: the root's exist watch)
	readSync                       // a sync, after which replies are at least the leader's zxid
	readBatch                      // the data and Stat of several nodes (MultiRead), each as a readData with list
)

// request is one read of the engine's.
type request struct {
	op   readOp
	path string // the caller's; "" for a sync
	// list: after a readData, read the node's children when it has some
	// (and lies above the depth limit).
	list  bool
	batch *[]string // readBatch: the nodes, path being the first
}

// paths are the nodes r reads.
func (r request) paths() []string {
	if r.batch != nil {
		return *r.batch
	}
	return []string{r.path}
}

// result is the answer to a request.
type result struct {
	r        request
	data     []byte
	stat     *client.Stat
	children []string
	exists   bool
	watch    <-chan client.WatchEvent // one-shot mode: the watch the read set
	err      error
	batch    []result // readBatch: each node's, as a readData
}

// reads is the engine's bookkeeping of its requests.
type reads struct {
	cl      *client.Client
	ctx     context.Context
	oneShot *armed // one-shot mode: the watches the reads set; nil otherwise

	out     chan result          // answers, from the goroutines
	busy    map[string][]request // by path: the request under way (or ready) first, then those waiting
	ready   []request            // the first request of its paths, not started yet
	running int                  // requests under way
}

func newReads(ctx context.Context, cl *client.Client, oneShot *armed) *reads {
	return &reads{cl: cl, ctx: ctx, oneShot: oneShot, out: make(chan result, maxReads), busy: map[string][]request{}}
}

// send asks for r, after the requests of its path before it. A request
// equal to one already waiting is not asked for twice.
func (q *reads) send(r request) {
	if waiting := q.busy[r.path]; len(waiting) > 0 {
		if !slices.Contains(waiting[1:], r) {
			q.busy[r.path] = append(waiting, r)
		}
		return
	}
	q.busy[r.path] = []request{r}
	q.ready = append(q.ready, r)
	q.pump()
}

// load reads the data of paths, nodes the image does not hold, each as a
// readData with list: in batches of those no read is under way for, and
// one by one the others (after their reads under way).
func (q *reads) load(paths []string) {
	var batch []string
	flush := func() {
		switch len(batch) {
		case 0:
		case 1:
			q.send(request{op: readData, path: batch[0], list: true})
		default:
			nodes := batch
			r := request{op: readBatch, path: nodes[0], list: true, batch: &nodes}
			for _, p := range nodes {
				q.busy[p] = []request{r}
			}
			q.ready = append(q.ready, r)
			q.pump()
		}
		batch = nil
	}
	for _, p := range paths {
		if q.busyWith(p) {
			q.send(request{op: readData, path: p, list: true})
			continue
		}
		if batch = append(batch, p); len(batch) == maxBatch {
			flush()
		}
	}
	flush()
}

// busyWith reports whether a request of path is under way or waiting.
func (q *reads) busyWith(path string) bool { return len(q.busy[path]) > 0 }

// pending reports whether r is under way or waiting.
func (q *reads) pending(r request) bool { return slices.Contains(q.busy[r.path], r) }

// idle reports whether every request has been answered.
func (q *reads) idle() bool { return len(q.busy) == 0 }

// done notes that res came back: the next request of each of its paths
// may go.
func (q *reads) done(res result) {
	q.running--
	for _, p := range res.r.paths() {
		waiting := q.busy[p][1:]
		if len(waiting) == 0 {
			delete(q.busy, p)
		} else {
			q.busy[p] = waiting
			q.ready = append(q.ready, waiting[0])
		}
	}
	if len(q.busy) == 0 {
		// Not kept: a map keeps the room it once needed (a load's reads
		// of every node), and the cache lives long after its load.
		q.busy = map[string][]request{}
	}
	q.pump()
}

// pump starts ready requests while fewer than maxReads are under way.
func (q *reads) pump() {
	for q.running < maxReads && len(q.ready) > 0 {
		r := q.ready[0]
		q.ready = q.ready[1:]
		q.running++
		w := q.oneShot.forRead(r)
		go func() { q.out <- q.do(r, w) }()
	}
	if len(q.ready) == 0 {
		q.ready = nil // let the backing array go
	}
}

// do makes the call r asks for; watch says whether it sets a watch
// (one-shot mode).
func (q *reads) do(r request, watch bool) result {
	res := result{r: r}
	ctx, cl := q.ctx, q.cl
	switch {
	case r.op == readSync:
		res.err = cl.Sync(ctx, "/")
	case r.op == readBatch:
		ops := make([]client.ReadOp, len(*r.batch))
		for i, p := range *r.batch {
			ops[i] = client.GetOp(p)
		}
		var rs []client.ReadResult
		rs, res.err = cl.MultiRead(ctx, ops...)
		for i, rr := range rs {
			res.batch = append(res.batch, result{r: request{op: readData, path: (*r.batch)[i], list: true},
				data: rr.Data, stat: rr.Stat, err: rr.Err})
		}
	case r.op == readData && watch:
		res.data, res.stat, res.watch, res.err = cl.GetW(ctx, r.path)
	case r.op == readData:
		res.data, res.stat, res.err = cl.Get(ctx, r.path)
	case r.op == readChildren && watch:
		res.children, res.stat, res.watch, res.err = cl.ChildrenW(ctx, r.path)
	case r.op == readChildren:
		res.children, res.stat, res.err = cl.Children(ctx, r.path)
	case r.op == readExists && watch:
		res.exists, res.stat, res.watch, res.err = cl.ExistsW(ctx, r.path)
	case r.op == readExists:
		res.exists, res.stat, res.err = cl.Exists(ctx, r.path)
	}
	return res
}
