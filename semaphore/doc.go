// Package semaphore is a counting semaphore on ZooKeeper: at most N leases
// held at once across processes, in the node layout of Curator's
// InterProcessSemaphoreV2, so that Go processes using zkit and Java
// processes using Curator share one semaphore on the same path.
//
// The layout: "<path>/locks" is a mutex (Curator's InterProcessMutex
// layout, "_c_<uuid>-lock-<seq>" nodes) and "<path>/leases" holds one
// protected ephemeral sequential node "_c_<uuid>-lease-<seq>" per lease.
// The maximum is not stored: every participant on a path must be given the
// same N (Curator's variant that reads N from a SharedCount keeps it in a
// node of the caller's choosing, outside this layout; zkit does not read
// it).
//
// An attempt takes the mutex, waits while it holds the mutex until fewer
// than N lease nodes are left (N - n for [Semaphore.AcquireN]), then
// creates its lease node and releases the mutex in one Multi, and checks
// the count once more: the nodes created before its own, its own
// included, must be at most N. That last check alone bounds the holders,
// whatever other processes do (see hold in acquire.go); the mutex keeps
// the waiters from filling the directory with nodes that make every one
// of them wait.
//
// Herd-free as far as the layout allows: each waiter for the mutex watches
// one node, and only the holder of the mutex watches the leases directory,
// so a release wakes one process. What the layout forces: every acquire
// passes through the mutex, even when leases are free, one attempt after
// the other; and the waiter at the front lists the whole leases directory
// after each release (the number of leases is nowhere but in the listing),
// which costs O(N) per release.
//
// A held lease is a [Lease]. Its Done channel and Context end when it may
// no longer be held: after Unlock, when the session is lost, when the
// connection stays suspended beyond the tolerance ([WithSuspendTolerance],
// default 0: as soon as it is suspended), or when someone else deletes the
// node. Its Token is recipes.TokenOf the czxid of its node: it
// identifies the lease and grows from one lease to the next created, but
// N holders hold at once, so a resource that must refuse a stale holder
// checks Guard (or uses Multi) rather than comparing tokens.
//
// Curator's waiters count every child of the leases directory; zkit counts
// the lease nodes only, so that a foreign node does not take a lease.
//
// Before it creates a missing locks or leases directory, an attempt checks
// that the path holds no configuration's or open double barrier's flag: such
// a path is refused with recipes.ErrOtherRecipe, before anything is
// written, since the configuration's readers would take the two
// directories for keys. While the directories are there, this costs
// nothing.
package semaphore
