// Package recipes holds the building blocks that zkit's primitives share, and
// that users can reuse for recipes of their own:
//
//   - sequence-node names and their order ([Kind], [Node], [ParseNode],
//     [SortNodes]): nodes are ordered by the numeric sequence suffix the
//     server appends, never by the whole name, in creation order even once
//     the counter has wrapped to negative numbers ([Node.Before]), and
//     names of other shapes are ignored;
//   - the herd-free queue walk ([Queue], [Ticket]): a joiner learns its
//     place from a listing sent right behind its create, answered in the
//     same round trip (client.CreateProtectedListed); each waiter watches
//     exactly one node, and a handoff costs O(1) round trips whatever the
//     number of waiters;
//   - held things: a sequence node held in turn ([Lease]; [NewLease] for a
//     node a recipe decided it holds some other way, as a counting
//     semaphore's lease) and a node kept present across sessions ([Kept],
//     one [Presence] at a time); several leases taken all or nothing in
//     one global order and held as one ([AcquireAll], [JointLease]).
//     Done and Context end when the thing may no longer be held
//     (released, session lost, connection suspended beyond the configured
//     tolerance, node deleted or claimed by someone else); Token is a
//     fencing token (a Lease's: TokenOf its node's czxid, plus its place
//     among the holders a Combiner handed the node to; a Presence's: its
//     node's czxid), Guard and Multi make fenced writes;
//   - lock combining ([Combiner]): goroutines of one process share one
//     place in a queue, handing it on without a request;
//   - cleanups on every exit path that outlive the call that started them
//     ([Remove]);
//   - directories made on demand ([CreateDir]: containers where the server
//     has them);
//   - the level-triggered watch that every observer is built on ([Follow],
//     delivering on a [Feed]): it reads again after every event, reconnect
//     and new session, so that the last value it delivers is always the
//     current one; [ChildrenReader] follows with it the children of a
//     node and their data, [ReadChildren] reads them once;
//   - what every recipe package shares at its surface: [Options] (ACL,
//     logger, suspend tolerance), the sentinel errors ([ErrLost] and the
//     causes that match it, [ErrReleased], [ErrConflict]) that each package
//     re-exports, and [Wrap], which names the call and the path in every
//     error a recipe returns.
//
// The client underneath supplies the rest: client.WaitConnected, with
// which every call that starts something new waits for a live session;
// client.Retry, client.IsTransient and client.Backoff for loops ([Pause]
// for the loop of a request that belongs to one session); and
// client.EnsurePath and client.CreateDir, which ride out lost replies.
//
// # One shape
//
// Every recipe package reads the same, as etcd's concurrency package does:
// a handle from New(c, path, ...) that does no I/O; methods that take a
// context first; options as WithX, set on New; the sentinels its users
// match re-exported from the package; every held thing with Done, Context,
// Err, Token, Guard and Multi; observers as a Watch or Observe method
// returning a *Feed. A call that starts something (acquire, campaign,
// join, enter) waits within its context for a live session rather than
// fail while the client replaces a lost one. So does a call that is
// waiting: a waiter whose session is lost has lost only its place in line,
// and queues again under the next session until its context ends
// ([Ticket.Rejoin], [Requeueable]); "no longer held" ([ErrLost]) is never
// said of something not held ([WaitError], [DeletedWhileWaiting]). A
// request that never left is the context's error, never "outcome
// unknown"; a closed client is client.ErrClosed everywhere.
//
// # One recipe per path
//
// Two kinds of recipe never share a path: the second one put on a path
// refuses it with an error matching [ErrOtherRecipe] before it writes or
// deletes anything there, and the first is never disturbed. What tells
// them apart is declared once for every zkit recipe, in zkit's registry of
// layouts (internal/layout: each recipe's node names, kinds and data, and
// what it refuses to find on its path). A [Queue] applies its recipe's:
// another queue recipe's node before the joiner's, or the flag of a
// configuration or an open double barrier at its first listing, is
// refused, at no extra request. A queue of [Kind]s of your own refuses
// what a lock refuses.
//
// A session's loss has one error, [LostSession]: it matches [ErrLost]
// and how the session ended, or client.ErrClosed once the client is
// closed, whatever the closing client saw first.
//
// A versioned compare-and-set loop is not here: package counter's engine
// is zkit's, with the pacing and the read-back of lost replies that a
// contended counter needs.
//
// # The release signal
//
// A zkit holder releases its node with one Multi of SetOp then DeleteOp on
// that node (unless its recipe asks for a plain delete with
// LeaseOptions.PlainRelease, as leader election does). The waiter right
// behind it watches the node with getData, so its one-shot watch fires with
// NodeDataChanged instead of NodeDeleted. Only a holder ever writes its
// node, so that event proves the node was held and therefore that every
// node it waited for is gone too: the waiter holds at once, without another
// round trip. A plain NodeDeleted (a waiter that gave up, an expired
// session, a Curator or kazoo holder) proves nothing about the other lower
// nodes, and the waiter looks again, unless the node was the only one it
// knew of.
//
// A holder whose node was alone in the queue at its last listing (when it
// joined, or when it looked again after a node before it went) releases
// with a plain delete, which the server applies faster than the Multi:
// whoever waits right behind it joined after that listing, when no node
// lower than the holder's was left, so the holder's node is the only one
// it knows of, and the plain NodeDeleted tells it as much as the signal
// would. A lone client pays
// create and list (one round trip) and a plain delete.
//
// Consequence: nobody else may write to a node of a queue. In particular
// Curator's cooperative revocation (Revoker.attemptRevoke, which writes to a
// holder's node) must not be pointed at a lock that zkit processes wait on.
// Other clients that only create, watch and delete nodes (Curator's
// InterProcessMutex and InterProcessReadWriteLock, go-zookeeper's zk.Lock)
// share a queue with zkit safely: their waiters treat any event as "look
// again".
//
// The one exception is a holder writing its own node of a Confirmed kind
// (Lease.Update: a leader that proclaims a new id). Waiters of such a kind
// take no event for their turn before a listing confirms it, so the write
// costs the waiter right behind one listing, and misleads no one.
package recipes
