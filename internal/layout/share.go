package layout

// Sharing is what happens when a second recipe is put on a path that a
// first one uses.
type Sharing int

// The ways two recipes meet on one path.
const (
	// Coexist: both work, and neither touches the other's nodes: the
	// second sees nothing it refuses, and neither takes a node of the
	// other for its own.
	Coexist Sharing = iota
	// Refused: the second refuses the path, with an error matching
	// ErrOtherRecipe, having written nothing; the first works on.
	Refused
	// Conflict: the second creates the path's node itself (a rendezvous)
	// and finds it taken: recipes.ErrConflict, nothing written.
	Conflict
	// Gap: the second sees nothing it refuses, but one of them takes a
	// node of the other for its own: nothing tells the two apart (see the
	// reason).
	Gap
)

var sharingNames = [...]string{Coexist: "coexist", Refused: "refused", Conflict: "conflict", Gap: "gap"}

func (s Sharing) String() string { return sharingNames[s] }

// Beside tells what happens when r's recipe is put on a path that first's
// uses, from their declarations, and why: the signs r refuses there, or
// for a gap the Blind of the recipe that takes the other's node for its
// own (first's when first takes a node r leaves, else r's, which writes a
// node first leaves).
func (r *Recipe) Beside(first *Recipe) (Sharing, string) {
	if refused := r.Refuses & first.Leaves; refused != 0 {
		if refused.Any(SignPath) {
			return Conflict, "the path's node is taken"
		}
		return Refused, r.Name + " refuses " + refused.String()
	}
	switch {
	case first.Takes.Any(r.Leaves):
		return Gap, first.Blind
	case r.Writes.Any(first.Leaves):
		return Gap, r.Blind
	}
	return Coexist, ""
}
