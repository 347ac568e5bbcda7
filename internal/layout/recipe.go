package layout

import "slices"

// Recipe is one recipe's layout: what it keeps at its path, and what it
// refuses to find there (see the package documentation).
type Recipe struct {
	// Name is the recipe's name: in telemetry, in recipes.Kind.Recipe, as
	// the zkit command names it ("lock").
	Name string
	// Noun is what its path is, in messages: "a <Noun>'s" ("read/write
	// lock", "configuration").
	Noun string
	// Queue are the markers of its sequence nodes, which take turns in its
	// path's directory: a queue recipe's (lock, rwlock, election). Another
	// queue recipe's node there shows SignQueueNode. Shared are those of
	// them whose nodes share their turn (a reader's): a shared node waits
	// only for lower nodes of the others, which wait for every lower node.
	Queue, Shared []string

	// Leaves are the signs its recipe leaves at its path while in use;
	// Refuses those its guard refuses there (the server itself refuses
	// SignEphemeralPath to a recipe that creates children: nothing can be
	// created under an ephemeral node). Takes are the signs of the nodes it
	// takes for its own state, Writes those of the nodes it writes or
	// deletes.
	Leaves, Refuses, Takes, Writes Signs
	// Blind says why another recipe may not tell this one's path from its
	// own, or from nothing: the reason of the gaps Beside finds.
	Blind string

	member func(Child) bool     // whether a child is one of its members
	fits   func(*Sighting) bool // Fits
}

// Fits reports whether s, a full look at a path (the node with its data,
// every child with its Stat and data), shows this layout and nothing
// else's. A queue recipe's layout fits a path where any of its nodes is.
// The layout of a semaphore or of a discovery base, whose nodes are below
// the path's children, only fits as far as the children show: the caller
// reads further.
func (r *Recipe) Fits(s Sighting) bool { return r.fits != nil && r.fits(&s) }

// IsMember reports whether ch is one of the recipe's members: a double
// barrier's (a canonical UUID, ephemeral where its Stat was read), a
// group's (an ephemeral node but a protected sequence node).
func (r *Recipe) IsMember(ch Child) bool { return r.member != nil && r.member(ch) }

// Named returns the layout of the recipe named name, or nil.
func Named(name string) *Recipe {
	i := slices.IndexFunc(All, func(r *Recipe) bool { return r.Name == name })
	if i < 0 {
		return nil
	}
	return All[i]
}

// Classify returns the layouts that s fits (Fits), in the order of All:
// the most particular first. An empty persistent node without children
// fits two (a counter at 0, a set barrier).
func Classify(s Sighting) []*Recipe {
	var out []*Recipe
	for _, r := range All {
		if r.Fits(s) {
			out = append(out, r)
		}
	}
	return out
}
