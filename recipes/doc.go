// Package recipes holds the building blocks that zkit's primitives share, and
// that users can reuse for recipes of their own:
//
//   - sequence-node names and their order ([Kind], [Node], [ParseNode],
//     [SortNodes]): nodes are ordered by the numeric sequence suffix the
//     server appends, never by the whole name, and names of other shapes are
//     ignored;
//   - the herd-free queue walk ([Queue], [Ticket]): each waiter watches
//     exactly one node, and a handoff costs O(1) round trips whatever the
//     number of waiters;
//   - held things ([Lease]): Done and Context end when the thing may no
//     longer be held (released, session lost, connection suspended beyond
//     the configured tolerance, node deleted by someone else), a fencing
//     token (the node's czxid) and a guard op for fenced writes;
//   - cleanups that outlive the call that started them ([DeleteInBackground])
//     and client.Backoff for their loops;
//   - the versioned compare-and-set loop ([Update]);
//   - the level-triggered watch that every observer is built on ([Follow]):
//     it reads again after every event, reconnect and new session, so that
//     the last value it delivers is always the current one.
//
// # The release signal
//
// A zkit holder releases its node with one Multi of SetOp then DeleteOp on
// that node (unless its recipe asks for a plain delete with
// LeaseOptions.PlainRelease, as leader election does). The waiter right behind it watches the node with getData, so
// its one-shot watch fires with NodeDataChanged instead of NodeDeleted.
// Only a holder ever writes its node, so that event proves the node was held
// and therefore that every node it waited for is gone too: the waiter holds
// at once, without another round trip. A plain NodeDeleted (a waiter that
// gave up, an expired session, a Curator or kazoo holder) proves nothing
// about the other lower nodes, and the waiter looks again.
//
// Consequence: nobody else may write to a node of a queue. In particular
// Curator's cooperative revocation (Revoker.attemptRevoke, which writes to a
// holder's node) must not be pointed at a lock that zkit processes wait on.
// Other clients that only create, watch and delete nodes (Curator's
// InterProcessMutex and InterProcessReadWriteLock, go-zookeeper's zk.Lock)
// share a queue with zkit safely: their waiters treat any event as "look
// again".
package recipes
