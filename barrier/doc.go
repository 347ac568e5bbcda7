// Package barrier holds the barriers of the ZooKeeper paper (§2.7): a
// double barrier, which lets a group of processes start a computation
// together and finish it together, and the simple barrier, which holds
// processes back until a coordinator lets them go.
//
//	d := barrier.NewDouble(c, "/app/phase", 8)
//	if err := d.Enter(ctx); err != nil { ... } // returns once 8 members are in
//	compute()
//	if err := d.Leave(ctx); err != nil { ... } // returns once all 8 are out
//
// # Layout (Curator's DistributedDoubleBarrier)
//
// The barrier's path is a directory (created when missing, as a container
// where the server has them) holding one ephemeral node per member, named
// by a UUID, and a persistent node "ready" that exists while a round is
// past its threshold:
//
//	<path>/<uuid>   EPHEMERAL, one per member
//	<path>/ready    PERSISTENT, created by the member that counts the last one in
//
// zkit members and members of Curator's DistributedDoubleBarrier can share
// a barrier. zkit names its members with version-8 UUIDs (Curator's are
// random, version 4) so that it can tell them apart, writes the members it
// counted into ready's data, and records each leave in the directory's
// data; Curator ignores all three. Children of other shapes are ignored
// (Curator counts them: keep the directory clean).
//
// # Enter
//
// A member (1) sets a watch on ready with exists, waiting first for any
// earlier round at the path to end (see Rounds); (2) creates its node;
// (3) lists the directory. If it counts count members, it creates ready
// and is through. Otherwise it waits for the watch of (1) to fire, and is
// through on its first event.
//
// Enter never returns before count members have entered: it returns
// either after this member counted count member nodes, or on an event of a
// watch set while ready did not exist, which means that ready was created
// since; and ready is only ever created by a member that counted count
// member nodes (zkit's and Curator's alike).
//
// A slow member is never stranded. On a loaded ensemble fast members see
// ready, pass, and start leaving; a slow member that then counted the
// directory would find fewer than count nodes, and wait in Enter for a
// count that will never come back while the others wait for it in Leave.
// zkit decides by the event, never by a second count: the watch of step (1)
// was set before the member's node existed, so it is there to see ready's
// creation whenever that happens, even if ready is deleted again before the
// member looks. After the member has counted fewer than count, nothing it
// could still read decides its entry: only the event does. A lost
// connection does not lose the event: on reconnect the client sets the
// watch again, and the server fires it if ready was created meanwhile;
// ready cannot have been created and deleted while the member was away,
// because it is deleted only once every member node of its round is gone,
// and this member's node is still there.
//
// # Leave
//
// The paper's leave protocol, as Curator runs it: members are ordered by
// name; the lowest member leaves last. Every other member deletes its node
// and waits for the lowest one's node to go; the lowest waits until its
// node is the only one left, then deletes it. A member that saw a lower
// member when it entered knows it is not the lowest (the round's lowest
// member never sees a lower one), so it deletes its node at once, without
// listing first.
//
// Leave never returns before every member has left. The lowest member
// returns after a listing showed its node alone. Any other member returns
// after its own node is gone and either (a) the lowest node went with the
// release signal: zkit's lowest member sets its node's data and deletes it
// in one transaction, only when it is alone, so that event alone proves
// everyone else left and nobody lists again; or (b) a listing shows no
// member of the round at all. When the lowest node goes without the
// signal (a Curator member, a lost member, a reconnect that turned the
// data event into a deletion), the member lists again and waits for the
// new lowest, until (b).
//
// The last member deletes ready in the transaction that deletes its own
// node: once any member's Leave has returned, no member node and no ready
// node of the round remain.
//
// # Members lost inside the barrier
//
// A member whose session expires (or whose process dies, or whose Leave is
// cancelled while others wait for it) never hangs the others: its node
// goes with its session, and nobody waits for a node that is gone. The
// others' Leave returns ErrMemberLost, still only once every member node
// is gone, so that the group learns that its computation was not
// complete:
//
//   - every zkit member increments the directory's data version in the
//     transaction that deletes its node in Leave, and the member that
//     created ready recorded the members it counted and that version in
//     ready's data; the last member out compares the two, and a zkit
//     member of the record that did not count itself out was lost;
//   - the last member releases without the release signal when it found a
//     member lost, and writes what it found into the directory's data;
//   - a member that sees the lowest node go while other members are still
//     inside knows it vanished (the lowest leaves only when alone).
//
// The lost member itself gets an error matching client.ErrSessionLost
// from its Leave. A member whose session expires before the threshold is
// not counted: the others keep waiting for count members (bound Enter
// with a deadline), and its own Enter, which was not through yet, goes on
// under the client's next session with a new node, its old one deleted
// first if the server may still keep it.
//
// Loss accounting needs ready to have been created by a zkit member and
// every member to use the same count; with Curator members in the round it
// covers the zkit members only, since Curator records nothing. It covers
// the members the creator of ready counted: a member beyond the count that
// got in while the barrier opened (it found ready missing, and created its
// node after the creator listed the directory) is not in the record, and
// its loss inside goes unreported. Send count members to a round, no more.
//
// # Rounds
//
// Curator's barrier serves one round per path. zkit's can serve rounds one
// after the other on the same path: when a round's Leave returns, its
// ready node is gone, and the next Enter starts a new round. A member that
// arrives while a round is past its threshold (ready exists and members
// are still inside) waits for that round to end and joins the next one:
// it never passes with a round that opened without it. A member leaving a
// round takes as its round the members of a listing that shows its own
// node or the round's ready node (no node of the next round can exist
// then); a listing without either comes after the release, and whatever
// member nodes it shows belong to the next round. A ready node left
// by a round whose members all vanished is deleted by the next member to
// arrive, in a transaction that checks the directory's data version seen
// with the empty listing, so that it can never delete a newer round's
// ready node. Do not reuse a path in rounds shared with Curator members:
// Curator deletes ready after leaving, without such a check.
//
// # Cost
//
// A round of n members costs each member an exists, a create and a
// getChildren to enter (plus the create of ready for those that count the
// last one in), and a getChildren, a multi (delete and record) and a
// getData-with-watch to leave; the last member lists once per wake-up,
// reads ready and sends one multi. A member whose client has not seen the
// directory yet creates it first (most members of a path made for one
// phase reach it at once: a create that failed for the missing directory
// would cost them two requests more). Measured with 8 members: 55
// requests per round on one path, 62 with a fresh path per round.
//
// # Simple barrier
//
// New returns a Barrier in Curator's DistributedBarrier layout: the node
// at the path is the barrier. Set creates it, Remove deletes it, and Wait
// returns once it does not exist. Wait returns on the deletion event even
// if the barrier was set again before it looked.
package barrier
