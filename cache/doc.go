// Package cache keeps a live, consistent mirror of part of a ZooKeeper
// tree in memory: one node, a node and its children, or a whole subtree
// (optionally depth-limited), each node with its data and Stat. It is
// zkit's answer to Curator's NodeCache, PathChildrenCache, TreeCache and
// CuratorCache, with one engine for the three shapes:
//
//	c, err := cache.OpenTree(ctx, cl, "/config")        // or OpenNode, OpenChildren; WithDepth
//	defer c.Close()
//	snap := c.Snapshot()                                // the tree at snap.Zxid()
//	n, ok := snap.Get("/config/db")                     // n.Data, n.Stat, n.Children
//	st, _ := cl.Set(ctx, "/config/db", v, -1)
//	snap, err = c.WaitFor(ctx, st.Mzxid)                // read your write
//	for ev := range c.Events() { ... }                  // created, changed, deleted, initialized, reset
//
// # Consistent snapshots
//
// A Snapshot is immutable and is the server's state at one zxid, which it
// carries: every node the cache holds exactly as the server had it once
// that transaction was applied, and none that did not exist then. It is
// never a mix of two moments, which a cache that applies each event as it
// comes (Curator's) cannot promise: its reads of different nodes land at
// different zxids. WaitFor(ctx, zxid) returns the first snapshot at zxid or
// later, so that a process that wrote through any client (and has the
// write's zxid, or the client's LastZxid) reads its write from the cache;
// it syncs the server when the cache has not seen that zxid.
//
// One field is excepted: a Stat's Aversion. ZooKeeper sends no event for
// setACL, so the cache keeps the Aversion it last read until the node
// changes otherwise.
//
// Snapshots cost little: the cache keeps its nodes in a persistent hash
// trie that the image it reads into and every snapshot share. A change
// copies the few levels of the trie above the node it changes, a snapshot
// copies nothing, and a node is held once, with its Stat packed (the
// length of its data is its data's), its path as the part below the
// cache's root, and its children's names as parts of theirs. A tree of
// 10 000 nodes of 16 bytes costs about 210 bytes of live heap a node, less
// than Curator's CuratorCache, which has no snapshots to give.
//
// A snapshot can only be taken once every node that changed has been read
// again: under writes that never pause for a round trip, the next snapshot
// (and WaitFor) waits for the first pause, and until then the cache serves
// the last one.
//
// # On its client's session
//
// The cache runs on its client's session and connection: one persistent
// recursive watch per cache (client.Watch), and ordinary reads, a few at a
// time. It opens no connection and no session of its own; a client with
// three caches is one connection at the server.
//
// Consistency rests on an order the server keeps and the client passes
// on: the server sends a watch event before the reply to any read it
// processes after the change, and the client puts the event in the
// watch's feed before that reply reaches its caller. The cache reads every
// node again that an event names (reads of one node one after the other),
// and once every read it asked for has been answered it takes the
// client's LastZxid and then every event its feed holds: when none calls
// for a read, its image is the server's tree at that zxid, and that is
// when it takes a snapshot.
//
// Under the persistent watch a node's children are listed only when its
// Stat says it has some (or counts other children than the cache holds):
// the watch was set before the read, so a child created later is announced
// anyway. A tree of mostly leaves loads with about one read a node. A cache
// of one node (OpenNode, WithDepth(0)) sets a persistent watch that is not
// recursive: the server tells it of the node's own changes, its children
// coming and going included, and of nothing below.
//
// On a server without persistent watches (ZooKeeper before 3.6, which
// answers addWatch Unimplemented) the cache falls back by itself to
// one-shot watches (WithOneShotWatches asks for them): every read of a
// node sets its data and child watches, atomically with the read, and
// every event makes the cache read the node again, which sets them again.
// The same argument holds, the events taken from each watch's channel; it
// costs a watch per node and more reads. PersistentWatch says which mode
// a cache is in.
//
// # Events
//
// Events delivers created, changed and deleted events per node in zxid
// order, "initialized" once the nodes of the first snapshot have been
// reported, and "reset" when the cache had to read the tree again under a
// new session (the differences follow). Delivery is level-triggered, like
// recipes.Follow: the cache never waits for the receiver, and a slow
// receiver is told the difference between what it knows and the latest
// snapshot, so it always ends on the current tree. An event's zxid is that
// of the transaction it reports; a delete's is known only when the server
// sends it with the watch event that announced the delete (ZooKeeper 3.9
// and later), and is 0 otherwise: a deleted node leaves no Stat to read
// it from.
//
// # Loss
//
// While its client is disconnected the cache serves its last snapshot,
// and Stale says so and since when. The client does not connect to a
// server in read-only mode (cut off from its quorum), so neither does the
// cache. When the client is connected again to the same session, the
// server has set the watch again but replays nothing, so the cache reads
// the tree again and publishes the snapshot it finds, whose differences
// come out as events: nothing that happened meanwhile is missed. When the
// session is lost it does the same under the client's next session, and
// emits "reset" first. A read that fails (the server sheds it, say) makes
// it read the tree again too, after a backoff that grows while the reads
// keep failing. The cache does not depend on the client's session, only
// on the client being open: closing the client closes the cache.
//
// # Limits
//
// A cache holds at most WithMaxNodes nodes and WithMaxBytes bytes (paths
// and data); a larger tree stops it with a *LimitError, which Open, WaitFor
// and Err return, rather than let it grow without bound. So does a node
// whose children are more than one reply can carry (a listing longer than
// the client reads: its WithMaxBuffer, ZooKeeper's jute.maxbuffer, and 64
// KiB): ZooKeeper sends it, but the client does not read it, and a cache
// that read the tree again would only meet it again
// (LimitError.Unreadable names the node). Its watch's feed holds 4096
// events while the cache is busy: a burst of more changes than that
// before the cache takes them makes it read the tree again.
package cache
