// Package lock is a distributed exclusive lock on ZooKeeper: the herd-free
// lock of the ZooKeeper paper (§2.5), with Curator's InterProcessMutex node
// layout, so that Go processes using zkit and Java processes using Curator
// exclude each other on the same path.
//
// Each attempt creates a protected ephemeral sequential node
// "<path>/_c_<uuid>-lock-<seq>" and waits, watching only the node just
// before its own, until no lower node is left. Nodes are ordered by their
// sequence number, which is creation order (a wrapped counter's too, where
// Curator's order is not: recipes.Node.Before); children of other shapes
// are ignored, but another queue recipe's node before its own, or the flag
// of a configuration or an open double barrier at its first look, is
// another recipe's path, refused with recipes.ErrOtherRecipe (see
// recipes.Queue).
//
// A held lock is a [Lease]. Its Done channel and Context end when the lock
// may no longer be held: after Unlock, when the session is lost, when the
// connection stays suspended beyond the tolerance ([WithSuspendTolerance],
// default 0: as soon as it is suspended), or when someone else deletes the
// node. Fence what you do while holding it: [Lease.Multi] (or
// [Lease.Guard]) for writes to ZooKeeper, [Lease.Token] for writes anywhere
// else.
//
// [WithCombining] lets the goroutines sharing one Lock share one place in
// the queue: Unlock hands the lock to the next of them without a round
// trip, for a bounded number of holders a node, each with a lease and a
// token of its own (see recipes.Combiner for the guarantees).
//
// [NewMulti] takes several locks all or nothing (Curator's
// InterProcessMultiLock), in the order of their paths so that two
// multi-locks over overlapping sets never deadlock, and holds them as one
// [MultiLease] that ends as soon as any of them is lost.
//
// Do not write to lock nodes: a waiter takes a data change on the node it
// waits for as its release (see package recipes, "The release signal").
package lock
