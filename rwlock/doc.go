// Package rwlock is a distributed read/write lock on ZooKeeper: the paper's
// §2.6 recipe, with Curator's InterProcessReadWriteLock node layout, so that
// Go processes using zkit and Java processes using Curator share one lock.
//
// Readers create "<path>/_c_<uuid>-__READ__<seq>" and writers
// "<path>/_c_<uuid>-__WRIT__<seq>", ephemeral and sequential, in the same
// directory and ordered by sequence number, which is creation order (a
// wrapped counter's too: recipes.Node.Before). A writer waits for every
// lower node and watches the one just before its own. A reader waits only
// for lower writers and watches the nearest of them, never a node above its
// own, which could wait for the reader in turn. Other children are ignored,
// but another queue recipe's node before its own, or the flag of a
// configuration or an open double barrier at its first look, is another
// recipe's path, refused with recipes.ErrOtherRecipe (see recipes.Queue).
//
// Held locks are leases (see package lock and recipes.Lease): Done and
// Context end on Unlock, session loss, suspension beyond the tolerance
// (default 0) or deletion of the node; Token, Guard and Multi fence writes.
//
// An RWLock value is one participant, and it neither upgrades nor
// downgrades: asking it for the write lock while one of its read leases is
// held returns ErrUpgrade at once, instead of waiting forever for itself,
// and asking it for a read lock while it holds the write lock returns
// ErrDowngrade: granted at once, a downgrade would let a writer queued
// behind the write lock take it while the read lock is still held.
// Goroutines that must exclude each other use RWLock values of their own;
// New is cheap and does no I/O.
package rwlock
