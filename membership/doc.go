// Package membership is group membership on ZooKeeper (paper §2.3), in the
// node layout of Curator's GroupMember: each member is an ephemeral node
// "<path>/<id>" whose data is the member's payload. A Go process using zkit
// and a Java process using Curator's GroupMember see the same group.
//
//	g := membership.New(c, "/services/api") // no I/O
//	m, err := g.Join(ctx, "worker-a", []byte("10.0.0.1:8080"))
//	...
//	defer m.Leave(ctx)
//	members, err := g.List(ctx)  // sorted by id
//	feed := g.Watch(ctx)         // the whole group, whenever it changes
//
// # Joining
//
// [Group.Join] refuses a group's node that is another recipe's, a
// configuration's or an open double barrier's (its flag shows it), with an
// error matching recipes.ErrOtherRecipe before it writes anything.
// Otherwise it creates the member's node and keeps it present: it is
// created again under each new session, after someone deleted it, and
// adopted again after a reconnect. Two processes claiming one id are a
// conflict, never a silent takeover: Join returns a [*ConflictError] when
// another live session owns the node (this includes a crashed predecessor
// whose session has not expired yet: retry after the session timeout), and
// a member whose node another process writes to stops with one. Curator's
// GroupMember, by contrast, adopts an existing node whatever its owner and
// overwrites its data; a zkit member that sees this stops with a conflict
// and deletes its node, leaving the id to the Curator member.
//
// # Present, and no stale self
//
// A member is not always present: its session may be lost, its connection
// suspended, its node deleted. Each stretch of time during which the member
// is known to be present is a [Presence], with its own Done channel and
// Context. [Member.Done] is the current presence's: it is closed as soon as
// the member may no longer be present, including while the connection is
// suspended for longer than the tolerance ([WithSuspendTolerance], default
// 0: at once), even though the node may still be there and other members
// may still list it. A member never reports itself present on the strength
// of an old session. When zkit has made the member present again (a new
// session, or the same one after a reconnect), [Member.Present] returns the
// new presence, and Done the new channel:
//
//	for {
//		p, err := m.Present(ctx) // waits until present again
//		if err != nil {
//			return err // Leave, a conflict, the client closed, or ctx
//		}
//		serve(p.Context()) // stops when the member may no longer be present
//	}
//
// Writes that must only happen while the member is present go through
// [Member.Multi] (or carry [Member.Guard]): ZooKeeper refuses them once the
// member's node is gone. Writes elsewhere carry [Member.Token].
//
// # Reading the group
//
// [Group.List] returns the members, sorted by id, with their data and
// Stat. A member is an ephemeral child of the group's node. The children
// that cannot be members are left out: persistent nodes (Curator's
// GroupMember, like zkit, makes its members ephemeral, so these are another
// recipe's: a semaphore's directories, a configuration's keys) and a lock's,
// read/write lock's or election's nodes in Curator's protected form
// ("_c_<uuid>-lock-0000000042"), which no chosen id looks like. A lock or a
// semaphore on the group's path is thus no member. Other recipes' ephemeral
// nodes (a discovery instance) have names any member may have, and are
// listed. [Group.Watch] streams full snapshots of the group, level-triggered
// (on recipes.Follow): after churn, a burst or a reconnect, the last
// snapshot delivered is the true group. It watches every member's data
// too, reading again only the members that changed.
//
// # Errors
//
// Input is checked before anything is sent: an [*client.InputError].
// Every other error names the call and the path; match it with errors.Is
// against this package's [ErrLost], [ErrConflict] and the others, or
// client.ErrClosed once the client is closed.
package membership
