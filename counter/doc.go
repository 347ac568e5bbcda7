// Package counter is a distributed integer counter on ZooKeeper: the
// versioned setData loop of the ZooKeeper paper, stored the way Curator's
// DistributedAtomicLong stores it (8 bytes, big-endian, in the data of
// the counter's node), so that Go processes using zkit and Java processes
// using Curator can count on the same path.
//
//	hits := counter.New(c, "/app/hits")
//	n, err := hits.Add(ctx, 1) // the value right after this increment
//
// Every change is a conditional write: setData with the version the new
// value was computed from (or a create, when the node does not exist yet),
// retried when another writer got in first. Nothing is ever written that
// was not computed from the value it replaces, so increments are neither
// lost nor doubled, whoever else (zkit, Curator, kazoo) writes the node
// with the same discipline.
//
// # Combining
//
// Counters of one client, path and encoding share their state, even when
// made by separate calls to New. Calls made while a write is in flight
// wait for it, then go together in the next write: 32 goroutines adding
// through one client cost one write per round, not 32 contending ones.
// Each caller still gets its own result: the value after its own delta, in
// the order the calls were made (prefix sums). A combined write that fails
// fails for every call in it, with the same error.
//
// # Contention
//
// A client writes from the value and version its own last write returned,
// without reading first: one round trip per increment. Such a writer would
// win nearly every race against writers that must read first, so a batch
// of adds whose write lost does not try again: it leaves its delta in a
// protected ephemeral sequential child "_c_<id>-<delta>-add-<seq>" of the
// counter's node, and the next zkit write applies it, together with the
// writer's own calls and every other delta waiting, in one multi that
// also writes each delta's result into its node (see delegate.go). While
// contention lasts, one writer applies everybody's increments, one write
// for many, and the slowest increment waits a few round trips (figures in
// the repository's docs/benchmarks.md). A lone writer never waits for
// anything.
//
// Who applies a delta never matters for correctness: every write is still
// conditional, and a delta's node goes from version 0 to 1 only with the
// counter's write, so it is applied once. Curator, kazoo and older zkit
// clients, which leave no deltas and apply none, count correctly beside
// zkit; a delta nobody applies within 20 ms is taken back and written by
// its own batch. Sets and compareAndSets, and clients that may not create
// children in the node (its ACL), retry after a random wait that adapts
// to contention instead (see pacer in pace.go). While deltas wait the node
// cannot be deleted: the server refuses to delete a node with children.
// Give the counter a node of its own.
//
// Do not delete and create again the node of a counter in use. A version
// says nothing of which node it belongs to: a write from the version the
// client's last write returned lands on a new node that has reached that
// version (a node created again is at version 0, as a counter's first
// write leaves it), and its value is then computed from the old node's.
// Curator's DistributedAtomicLong reads before each write and does not run
// into this; zkit saves that read.
//
// # Unknown outcomes
//
// A write whose reply is lost (the connection dropped, or the caller's
// context ended while it was in flight) may or may not have been applied.
// The counter then syncs, reads the node back, and retries only when it
// can tell that the write was not applied: the node is still at the
// version it was written from, or one version further with other data than
// ours (a create: the node exists at version 0 with other data). A write
// that was not applied by then cannot be applied later: its version
// condition no longer holds, and a request still in flight on the old
// connection is refused by the server once the session has moved. In every
// other case (our data one version further, which another writer may have
// written too; several versions further; the node gone) every call of the
// write gets an error matching client.ErrOutcomeUnknown: its change was
// applied once or not at all. A caller whose context ends while its call
// is being written gets that error too; one whose call was still queued
// gets the context's error, and nothing was sent for it.
//
// # Sessions
//
// A counter holds nothing that belongs to a session: its node is
// persistent. A call made while the connection is down waits (within its
// context) for the client to reconnect; the session expiring changes
// nothing but the rule above for writes in flight at that moment.
//
// # Encodings and errors
//
// [Long] (the default) is Curator's DistributedAtomicLong, [Int] Curator's
// SharedCount (4 bytes), [Text] kazoo's Counter (decimal). Empty data reads
// as 0, as they all read it. Data that does not decode is a *[DataError]
// naming the path and the length found; a result outside the encoding's
// range is an *[OverflowError] (the counter never wraps). Both leave the
// node untouched. Invalid paths and values out of range for Set and
// CompareAndSet are a *client.InputError before anything is sent. A node
// that is another recipe's is an error matching recipes.ErrOtherRecipe,
// and is not written: an ephemeral node (a rendezvous's zr, a member's
// node), one that holds a lock's, read/write lock's, election's or
// semaphore's nodes (such a directory is a container, which the server
// deletes, with the counter's value, once that recipe leaves it empty), or
// the directory of a double barrier whose round is open, whose data the
// barrier reads. A lock's directory that its recipe has already left
// empty is not told apart (ZooKeeper shows a container's Stat as a
// persistent node's): a counter put there counts until the server's next
// check of its containers (znode.container.checkIntervalMs, a minute by
// default) deletes the node, value and all.
package counter
