// Package inspect tells what lives at a ZooKeeper path from its node
// layout, and shows who holds it, who waits and since when: the first
// questions an operator asks about a slow lock. It reads through package
// client only, and writes nothing.
//
// [Inspect] recognises each recipe by its layout, as zkit's registry of
// layouts declares it (internal/layout: every recipe's node names, kinds
// and data, and how each is told; layout.Classify), and shows:
//
//	lock        the lowest holds, the others wait in order
//	rwlock      a writer holds when lowest, a reader when no writer is lower
//	semaphore   every lease holds; the lock in front of them queues the waiters
//	election    the lowest leads, the others are candidates in order (their ids)
//	barrier     a double barrier's members, and whether its round is open (ready)
//	counter     its value in every encoding that fits: long, int, text
//	group       the members and their payloads
//	rendezvous  its owner and the address published in it
//	config      the keys and their values, and whether ready exists
//	discovery   the instances of one service, or of every service of a base
//
// kazoo's recipes share some of these paths with other layouts, and are
// recognised too: its Lock and Election ("<hex>__lock__<seq>", data =
// identifier), its ReadLock and WriteLock ("__rlock__", "__lock__"), its
// Semaphore (lease nodes "<path>/<hex>" and a lock at "<path>-__lock__"),
// its DoubleBarrier (members "<path>/<hex>"), its Party
// ("<hex>__party__"), and its Counter (decimal text). Their nodes are
// marked with [Kazoo]. Curator's layouts are zkit's, so a node tells its
// origin only through its data: Curator writes its client's default data,
// the host's IP address, into lock, read/write lock and semaphore nodes,
// where zkit writes nothing unless asked to (WithData); such nodes are
// marked with [Curator]. A queued or leased node's data is who holds or
// waits (Node.ID): the id zkit's commands write (--id), Curator's
// address, a candidate's id, a kazoo identifier. A double barrier's members tell by their UUIDs:
// zkit's are version 8, Curator's version 4.
//
// A node whose ACL keeps its data from the client is shown by its Stat
// alone (exists needs no permission): its name, owner, token and age. A
// path whose children the client may not list is an error matching
// client.ErrNoAuth for Inspect, and is passed over by a scan, which
// lists it in Snapshot.Unreadable.
//
// A recipe's directory may hold nodes that are not its own: another
// recipe's (a lock's beside an election's), or a name whose sequence
// number does not parse. They are not shown among its nodes, and a note
// names them.
//
// Nothing here is a snapshot of one instant: a path is read with one
// request per node, and nodes may come and go between two requests. A
// node gone between the listing and its read is left out. Ages are
// measured from a node's ctime (the server's clock) to the time of the
// read (this process's clock).
//
// [Scanner] walks the paths under some roots and finds every lock,
// read/write lock, semaphore, election, double barrier, group and
// discovery service there, watching (children and data watches) what it
// read, so that a caller learns of a change without polling: zkit top is
// built on it. [Top] renders a scan as a table.
package inspect
