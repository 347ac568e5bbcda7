package membership

import (
	"context"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// Group is the group at a ZooKeeper path: a node whose children are the
// members. It is safe for concurrent use, and holds nothing itself: each
// Join makes a Member of its own.
type Group struct {
	c    *client.Client
	path string
	cfg  config
}

// New returns the group at path. It does no I/O: the path is checked by
// Join, List and Watch, before anything is sent. The options apply to
// every Join on the group.
func New(c *client.Client, path string, opts ...Option) *Group {
	cfg := recipes.Apply(opts)
	return &Group{c: c, path: path, cfg: cfg}
}

// Path is the group's node.
func (g *Group) Path() string { return g.path }

// Join makes this process a member of the group under id, with data as
// its payload, and keeps it a member until Leave (see the package
// documentation). It returns once the member's node "<path>/<id>" is
// present, or with an error: an *client.InputError for an invalid path or
// id, or data over the limit (nothing is sent); a *ConflictError when
// another session owns the id; an error matching recipes.ErrOtherRecipe,
// with nothing written, when the group's node is a configuration's or an
// open double barrier's (its flag shows it: layout.Membership), whose
// readers would refuse the path once a member's ephemeral node is there;
// an error matching client.ErrClosed when the client is closed; ctx's
// error.
//
// The group's node and its parents are created (as persistent nodes) when
// missing.
func (g *Group) Join(ctx context.Context, id string, data []byte) (*Member, error) {
	if err := checkJoin(g.c, g.path, id, data); err != nil {
		return nil, err
	}
	node := client.JoinPath(g.path, id)
	if err := layout.Membership.CheckFlag(ctx, g.c, g.path); err != nil {
		return nil, recipes.Wrap("join", node, err)
	}
	k, err := recipes.Keep(ctx, g.c, node, data, g.cfg.Keep())
	if err != nil {
		return nil, recipes.Wrap("join", node, err)
	}
	return &Member{id: id, k: k}, nil
}

// List returns the members of the group, sorted by id, with their data
// and Stat: its ephemeral children, but a lock's, read/write lock's or
// election's nodes (see the package documentation). A group whose node
// does not exist has no members. An invalid path is an
// *client.InputError, before anything is sent.
func (g *Group) List(ctx context.Context) ([]Entry, error) {
	if err := recipes.CheckDir("list", g.path, "group"); err != nil {
		return nil, err
	}
	entries, err := recipes.ReadChildren(ctx, g.c, g.path, entry)
	return entries, recipes.Wrap("list", g.path, err)
}

// Watch follows the group and delivers a snapshot of all its members (as
// List counts them), sorted by id, whenever a member joins, leaves or
// changes its data. It is built on recipes.Follow and level-triggered like
// it: the Values channel holds only the latest snapshot, and after churn,
// a burst or a reconnect the last snapshot delivered is the true group. A group whose
// node does not exist is an empty snapshot. The feed ends when ctx ends,
// when the client is closed (client.ErrClosed), or on an error retrying
// cannot cure (an invalid path: an *client.InputError, before anything is
// sent).
func (g *Group) Watch(ctx context.Context) *recipes.Feed[[]Entry] {
	check := recipes.CheckDir("watch", g.path, "group")
	var children recipes.ReadFunc[[]Entry]
	if check == nil {
		children = recipes.ChildrenReader(ctx, g.c, g.path, entry)
	}
	read := func(ctx context.Context) ([]Entry, <-chan client.WatchEvent, error) {
		if check != nil {
			return nil, nil, check
		}
		group, w, err := children(ctx)
		return group, w, recipes.Wrap("watch", g.path, err)
	}
	return recipes.Follow(ctx, g.c, read, sameGroup)
}
