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
// A snapshot can only be taken once every node that changed has been read
// again: under writes that never pause for a round trip, the next snapshot
// (and WaitFor) waits for the first pause, and until then the cache serves
// the last one.
//
// # Why a connection of its own
//
// The cache does not read through the client's go-zookeeper connection. It
// opens a read-only session of its own (with the client's servers, dialer,
// TLS, credentials and namespace: client.Wire) and speaks the wire
// protocol with zkit's codec, for two reasons. go-zookeeper 1.0.4 cannot
// send addWatch, the request (ZooKeeper 3.6+) that sets one persistent
// recursive watch for a whole subtree. And consistency is cheap on a
// connection whose frames the cache reads itself: the server sends a
// watch event before the reply to any read it processes after the change,
// so events and replies arrive on the socket as one stream in transaction
// order. The cache reads every node again that an event names, and once
// every read it asked for has been answered, its image is the server's
// tree at the zxid of the last reply: that is when it takes a snapshot. A
// client that hands events and replies over on different channels loses
// that order.
//
// Under the persistent watch a node's children are listed only when its
// Stat says it has some: the watch was armed before the read, so a child
// created later is announced anyway. A tree of mostly leaves loads with
// about one read a node (Curator's CuratorCache sends two). A cache of one
// node (OpenNode, WithDepth(0)) sets a persistent watch that is not
// recursive: the server tells it of the node's own changes, its children
// coming and going included, and of nothing below.
//
// On a server without persistent watches (ZooKeeper before 3.6, which
// answers addWatch Unimplemented) the cache falls back by itself to
// one-shot watches on the same connection (WithOneShotWatches asks for
// them): every read of a node sets its data and child watches, atomically
// with the read, and every event makes the cache read the node again,
// which sets them again. The same argument holds; it costs a watch per
// node and more reads. PersistentWatch says which mode a cache is in.
//
// # Events
//
// Events delivers created, changed and deleted events per node in zxid
// order, "initialized" once the nodes of the first snapshot have been
// reported, and "reset" when the cache had to read the tree again under a
// new session (the differences follow). Delivery is level-triggered, like
// recipes.Follow: the cache never waits for the receiver, and a slow
// receiver is told the difference between what it knows and the latest
// snapshot, so it always ends on the current tree.
//
// # Loss
//
// While the cache's connection is down it serves its last snapshot, and
// Stale says so and since when. A server in read-only mode (cut off from
// its quorum) counts as down: the cache does not connect to it. It
// reconnects (resuming its session), sets its watch again and reads the
// tree again, and publishes the snapshot it finds, whose differences come
// out as events: nothing that happened meanwhile is missed. When its
// session has expired it opens a new one, does the same and emits "reset"
// first. The cache does not depend on the client's session, only on the
// client being open: closing the client closes the cache.
//
// # Limits
//
// A cache holds at most WithMaxNodes nodes and WithMaxBytes bytes (paths
// and data); a larger tree stops it with a *LimitError, which Open, WaitFor
// and Err return, rather than let it grow without bound. So does a node
// whose children are more than one reply can carry (a listing longer than
// twice the client's WithMaxBuffer, ZooKeeper's jute.maxbuffer, or twice
// its default of 1 MB when that is larger): ZooKeeper
// sends it, but no connection can read it, and a cache that reconnected
// would only read it again (LimitError.Unreadable names the node).
package cache
