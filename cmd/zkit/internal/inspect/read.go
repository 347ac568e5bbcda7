package inspect

import (
	"context"
	"errors"
	"slices"

	"github.com/zkit-dev/zkit/client"
)

// reader reads nodes for Inspect and Scanner. With watches, each read sets
// a watch on what it read, unless one is set there already.
type reader struct {
	c *client.Client
	w *watches // nil: plain reads
	// limit, when above 0, is the most nodes list may count, the
	// directory included: a directory of limit children or more is
	// errTooMany, its children unread.
	limit int
}

// errTooMany is list's error for a directory of more children than its
// reader's limit.
var errTooMany = errors.New("more children than the nodes left to read")

// child is one node read: its name under the path inspected, data, Stat.
type child struct {
	name string
	data []byte
	stat *client.Stat
}

// index returns the names of kids, in their order, and kids by name.
func index(kids []child) (names []string, byName map[string]child) {
	names, byName = make([]string, len(kids)), make(map[string]child, len(kids))
	for i, k := range kids {
		byName[k.name], names[i] = k, k.name
	}
	return names, byName
}

func (r *reader) get(ctx context.Context, path string) ([]byte, *client.Stat, error) {
	if !r.w.arm(path, dataWatch) {
		return r.c.Get(ctx, path)
	}
	data, st, ch, err := r.c.GetW(ctx, path)
	r.w.follow(path, dataWatch, ch, err)
	return data, st, err
}

func (r *reader) children(ctx context.Context, path string) ([]string, error) {
	if !r.w.arm(path, childWatch) {
		names, _, err := r.c.Children(ctx, path)
		return names, err
	}
	names, _, ch, err := r.c.ChildrenW(ctx, path)
	r.w.follow(path, childWatch, ch, err)
	return names, err
}

// watchChildren sets a child watch on path unless one is set: how a scan
// learns of children under a node it had no reason to list. Without
// watches it does nothing.
func (r *reader) watchChildren(ctx context.Context, path string) error {
	if !r.w.arm(path, childWatch) {
		return nil
	}
	_, _, ch, err := r.c.ChildrenW(ctx, path)
	r.w.follow(path, childWatch, ch, err)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	return err
}

func (r *reader) exists(ctx context.Context, path string) (bool, *client.Stat, error) {
	if !r.w.arm(path, existsWatch) {
		return r.c.Exists(ctx, path)
	}
	ok, st, ch, err := r.c.ExistsW(ctx, path)
	r.w.follow(path, existsWatch, ch, err)
	return ok, st, err
}

// list reads dir's children with their data and Stat, sorted by name.
// Children deleted before their read are left out; a missing dir has none.
func (r *reader) list(ctx context.Context, dir string) ([]child, error) {
	names, err := r.children(ctx, dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if r.limit > 0 && len(names) >= r.limit {
		return nil, errTooMany
	}
	slices.Sort(names)
	out := make([]child, 0, len(names))
	for _, name := range names {
		data, st, err := r.readable(ctx, client.JoinPath(dir, name))
		switch {
		case errors.Is(err, client.ErrNoNode):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, child{name, data, st})
	}
	return out, nil
}

// readable reads a node's data and Stat, or only its Stat when its ACL
// keeps its data from this client (exists needs no permission): a
// recipe's nodes tell their layout and owners by their names and Stats.
func (r *reader) readable(ctx context.Context, path string) ([]byte, *client.Stat, error) {
	data, st, err := r.get(ctx, path)
	if !errors.Is(err, client.ErrNoAuth) {
		return data, st, err
	}
	ok, st, err := r.exists(ctx, path)
	if err == nil && !ok {
		err = client.ErrNoNode
	}
	return nil, st, err
}
