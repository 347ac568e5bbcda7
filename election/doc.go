// Package election is leader election on ZooKeeper: the ZooKeeper paper's
// use of the lock queue for electing a leader (§2.5), with Curator's
// LeaderLatch node layout, so that Go processes using zkit and Java
// processes using Curator's LeaderLatch compete in one election.
//
// Each candidacy creates a protected ephemeral sequential node
// "<path>/_c_<uuid>-latch-<seq>" whose data is the participant's id. The
// candidate with the lowest sequence number leads; every other candidate
// watches only the node just below its own. Nodes are ordered by their
// sequence number, which is creation order (a wrapped counter's too, where
// Curator's order is not: recipes.Node.Before); children of other shapes
// are ignored, but another queue recipe's node before its own, or the flag
// of a configuration or an open double barrier at its first look, is
// another recipe's path, refused with recipes.ErrOtherRecipe (see
// recipes.Queue).
//
// [Election.Campaign] blocks until the candidate leads, and returns its
// [Term] only once the server has confirmed that the candidate's node is
// the lowest and belongs to the current session: a deduction from watch
// events alone is not enough to lead. A Term ends (Done, Context) when the
// leader resigns, when its session is lost, when its connection stays
// suspended beyond the tolerance ([WithSuspendTolerance], default 0: as
// soon as it is suspended), or when its node is deleted. Between the loss
// and the moment the old leader sees Done, a new leader may already act:
// fence what a leader does with [Term.Multi] (or [Term.Guard]) for writes
// to ZooKeeper, and with [Term.Token] for writes anywhere else.
//
// Because the turn is confirmed by a listing, a waiting candidate does not
// watch its own node at once: a leader handing over to the next candidate
// costs five requests (create, list, watch the node below, confirm,
// resign). A candidate that has waited for a second sets that watch too, so
// that a foreign delete of its node ends Campaign (ErrNodeDeleted) within
// about a second, and at the latest at its turn.
//
// A leader that steps down to campaign again at once, as Curator's
// LeaderSelector with autoRequeue does, uses [Term.Requeue]: the delete of
// its node and the create of its next candidacy's go in one transaction,
// which makes a handover four requests, and a lone candidate's new term
// two (the transaction and the listing behind it). [Election.Run] does so
// when it has no requeue pause.
//
// A leader resigns with a plain delete of its node. zkit's locks release
// with a data change and a delete in one Multi, which wakes the next zkit
// waiter without another round trip, but Curator's LeaderLatch reacts to
// NodeDeleted only: behind a lock-style release it would wait forever.
//
// [Election.Run] is Curator's LeaderSelector with autoRequeue: it
// campaigns, runs a function with each term it wins (its context ends with
// the term), resigns when the function returns, and campaigns again after
// [WithRequeuePause], until its own context ends.
//
// [Election.Leader] reads who leads now, and [Election.Observe] follows it:
// the owner of the lowest node, or [NoLeader]. Observation is
// level-triggered: after churn or a reconnect the last value delivered is
// the current leader. [Election.Participants] lists every candidate in
// line order, the leader first, Curator's LeaderLatch candidates among
// them, as LeaderLatch's getParticipants does.
//
// A leader publishes a new id without resigning with [Term.Proclaim]
// (etcd's Proclaim): a write to its own node, conditional on the version
// the term last wrote, which the term takes for its own. Each such write
// wakes the candidate right behind, which a zkit candidate answers with
// one listing before it waits on; Curator's LeaderLatch candidates stop
// watching at any event but a deletion, so do not Proclaim in an election
// they take part in. Nobody else should write to election nodes: a term
// whose node someone else writes ends (ErrNodeDeleted), and Curator's
// candidates would take the node's new data for the leader's id.
package election
