// Package recipetest is test support for zkit's recipes (lock, rwlock,
// election and the primitives built like them on recipes.Queue; membership
// and rendezvous, built on recipes.Kept).
//
// RunQueueContract is the one suite every queue recipe runs: a recipe
// describes itself in a QueueRecipe (how to make a participant, how it
// acquires in each mode, how a holder releases) and gets the behaviour
// every such recipe owes its users checked on real ZooKeeper and on the
// reference server. A recipe's own tests keep only what is its own.
//
// RunKeptFencing is its counterpart for what recipes built on recipes.Kept
// hold (a group member, a self-published rendezvous node): writes through
// it are fenced by its presence, across an expired session.
//
// EachFault runs a failover test: a recipe on a 3-node ensemble of real
// ZooKeeper, against a path whose directory and parents do not exist yet,
// while the ensemble's leader is killed, or cut from the other members,
// just before, at or a few milliseconds after the participants start
// (Ensemble.Run, Ensemble.Strike). The test checks the recipe's own
// invariant, then what the recipe left of the nodes it created (Layout):
//
//	recipetest.EachFault(t, recipetest.LeaderKills, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
//		clients := e.Clients(t, 4)
//		e.Run(t, f, len(clients), func(ctx context.Context, i int) { ... })
//		recipetest.Layout{Containers: []string{dir}, ...}.Require(t, clients[0])
//	})
//
// Around them: wait helpers, a check that errors name their path once
// (NamesPath), a fencing-token checker (Exclusion), and Java peers that
// drive Curator's recipes on the same paths. The servers to run against,
// and their faults, are zktest.EachBackend's.
//
// It is for tests only; its functions fail the test they are given
// instead of returning errors.
package recipetest
