package layout

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zkit-dev/zkit/client"
)

// ErrOtherRecipe: the path holds the nodes of another kind of recipe (a
// mutex's beside a read/write lock's, an election's beside a lock's). Two
// kinds on one path would be two queues that exclude nothing, or a
// recipe's nodes in another's data, so a recipe refuses such a path
// (recipes.ErrOtherRecipe is this error).
var ErrOtherRecipe = errors.New("zkit: the path is used by another kind of recipe")

// Check returns an error matching ErrOtherRecipe when s shows a sign that
// r refuses (Refuses): the path is another recipe's, and r's recipe must
// neither write nor delete there. The error names the path and what shows
// it: the path's node, the first child that shows a refused sign, or the
// children together. Check sends nothing: the caller reads what its recipe
// needs to see, and no more.
func (r *Recipe) Check(s Sighting) error {
	all, kids := s.signs()
	refused := all & r.Refuses
	if refused == 0 {
		return nil
	}
	return r.refuse(what(&s, refused, kids))
}

// CheckFlag returns Check's error for path's ReadyFlag child: a persistent
// one marks a configuration's or an open double barrier's path, which a
// recipe that refuses SignFlag must not write under (their readers would
// take its nodes for keys or members, or refuse the path). It looks with
// one exists request, retried while it fails transiently (client.Retry). A
// missing path or flag is no error; nor is an ephemeral "ready" (a group's
// member may be called so).
func (r *Recipe) CheckFlag(ctx context.Context, c *client.Client, path string) error {
	var (
		found bool
		st    *client.Stat
	)
	err := c.Retry(ctx, func(ctx context.Context) (err error) {
		found, st, err = c.Exists(ctx, client.JoinPath(path, ReadyFlag))
		return err
	})
	if err != nil || !found {
		return err
	}
	return r.Check(Sighting{Path: path, Children: []Child{{Name: ReadyFlag, Stat: st}}})
}

// refuse is the error for a path whose what shows it is another recipe's.
func (r *Recipe) refuse(what string) error {
	return fmt.Errorf("zkit: %s, not %s: %w; use one recipe per path", what, possessive(r.Noun), ErrOtherRecipe)
}

// what says what shows that s's path is another recipe's, for the first of
// the refused signs: the path's node, a child, the children together, the
// data.
func what(s *Sighting, refused Signs, kids []Seen) string {
	if refused.Any(SignEphemeralPath) {
		return fmt.Sprintf("%s is an ephemeral node (session 0x%x)", s.Path, s.Stat.EphemeralOwner)
	}
	for i, k := range kids {
		if sign := k.Signs & refused; sign != 0 {
			return s.Path + " holds " + s.Children[i].Name + ", " + childWhat(s.Children[i], k, sign)
		}
	}
	switch {
	case refused.Any(SignOpenRound):
		return fmt.Sprintf("%s holds %s beside members, %s", s.Path, ReadyFlag, whose(SignOpenRound))
	case refused.Any(SignKeys):
		return fmt.Sprintf("%s holds %s beside nodes that are no %s member's, %s", s.Path, ReadyFlag, DoubleBarrier.Noun, whose(SignKeys))
	case refused.Any(SignChildren):
		n := len(s.Children)
		if s.Stat != nil {
			n = int(s.Stat.NumChildren)
		}
		return fmt.Sprintf("%s is a node with %d children", s.Path, n)
	case refused.Any(SignData):
		return fmt.Sprintf("%s holds data (%d bytes) that is no JSON, %s", s.Path, len(s.Data), whose(SignData))
	}
	return s.Path + " shows " + refused.String()
}

// childWhat says what a child is, by the refused signs it shows.
func childWhat(ch Child, k Seen, sign Signs) string {
	switch {
	case sign.Any(SignQueueNode | SignLeaseNode | SignDelta):
		return possessive(k.Owner.Noun) + " node"
	case sign.Any(SignFlag):
		return whose(SignFlag) + " node"
	case sign.Any(SignEphemeralChild):
		return fmt.Sprintf("an ephemeral node (session 0x%x)", ch.Stat.EphemeralOwner)
	case sign.Any(SignSubdir):
		return fmt.Sprintf("a node with %d children", ch.Stat.NumChildren)
	}
	return sign.String()
}

// whose names the recipes that leave sign, for a message: "a
// configuration's or a double barrier's".
func whose(sign Signs) string {
	var nouns []string
	for _, r := range All {
		if r.Leaves.Any(sign) {
			nouns = append(nouns, possessive(r.Noun))
		}
	}
	return strings.Join(nouns, " or ")
}

// possessive is "a lock's", "an election's".
func possessive(noun string) string {
	if strings.ContainsAny(noun[:1], "aeiou") {
		return "an " + noun + "'s"
	}
	return "a " + noun + "'s"
}
