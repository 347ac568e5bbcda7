// Package layout is the registry of the node layouts of zkit's recipes.
// Each recipe declares here, once, what it keeps at its path: the names
// and markers of its nodes, which of them are persistent or ephemeral, and
// what its data is (see All). The recipes check what they find at a path
// against it before they write there (Recipe.Check, Recipe.CheckFlag,
// and recipes.Queue for every queue recipe), and the inspector tells what
// lives at a path by it (Classify). It is zkit's own: a recipe package
// reads its names from its entry, and no other package spells them.
//
// # What a look at a path shows
//
// A recipe that looks at a path sees part of it: a node's Stat, its
// children's names (with their Stat, or their data, where it read them),
// its data where it needs it (a Sighting). Signs are what such a look can
// tell of a recipe: a child named as a lock's node (SignQueueNode), a
// persistent "ready" child (SignFlag), an ephemeral node at the path
// (SignEphemeralPath), ... A layout declares the signs its recipe leaves
// at its path, the signs its guard refuses there, and the signs it takes
// for its own state or writes.
//
// # Two recipes on one path
//
// Two kinds of recipe never share a path: the second one put on a path
// refuses it with an error matching ErrOtherRecipe before it writes or
// deletes anything there, and the first is never disturbed. From the
// layouts' declarations, Beside tells what happens for every pair: the
// second refuses the path (it sees a sign of the first that it refuses),
// or both work beside each other (neither takes a node of the other for its
// own), or the pair is a gap: the second cannot tell the first's nodes
// from nothing or from its own, and the reason is the layout's Blind. The
// recipes' guards implement the declared refusals; a test runs every pair
// of real recipes against Beside on both servers.
//
// # A new recipe
//
// A new recipe adds its entry to All (its names, and its Leaves, Refuses,
// Takes and Writes), and reads its names from it. Every recipe's guard
// then knows its nodes, the inspector recognises it, and Beside covers it
// beside every other recipe.
package layout
