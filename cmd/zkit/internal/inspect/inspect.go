package inspect

import (
	"context"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Inspect reads what lives at path and reports it. A path whose layout
// is no recipe's is reported as Unknown, with its children. An invalid
// path is a *client.InputError (nothing is sent); a missing one an error
// matching client.ErrNoNode; others (client.ErrClosed, a lost connection,
// ctx's error) are the client's, naming the path.
func Inspect(ctx context.Context, c *client.Client, path string) (*Report, error) {
	if err := client.CheckPath("inspect", path); err != nil {
		return nil, err
	}
	r, _, err := inspect(ctx, &reader{c: c}, path)
	return r, recipes.Wrap("inspect", path, err)
}

// inspect tells the recipe at path by its children, most particular
// layout first, and returns the children too.
func inspect(ctx context.Context, rd *reader, path string) (*Report, []child, error) {
	r := &Report{Path: path, Kind: Unknown, At: time.Now()}
	data, st, err := rd.readable(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	r.Stat, r.Data = st, data
	kids, err := rd.list(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	if len(kids) == 0 {
		// A kazoo Semaphore without leases is its path alone.
		if ok, err := kazooSemaphore(ctx, rd, r, nil); err != nil || ok {
			return r, nil, err
		}
		leaf(r)
		return r, nil, nil
	}
	for _, recognise := range []func(context.Context, *reader, *Report, []child) (bool, error){
		queue, counterDeltas, semaphore, kazooSemaphore, barrier, config, service, group, discoveryBase,
	} {
		ok, err := recognise(ctx, rd, r, kids)
		if err != nil || ok {
			if r.Origin == "" {
				r.Origin = common(r.Nodes)
			}
			return r, kids, err
		}
	}
	unknown(r, kids)
	return r, kids, nil
}

// unknown lists the children of a path no recipe's layout fits.
func unknown(r *Report, kids []child) {
	r.Kind, r.Nodes = Unknown, nil
	for _, k := range kids {
		n := node(Child, k)
		n.Children = k.stat.NumChildren
		r.Nodes = append(r.Nodes, n)
	}
	r.Notes = append(r.Notes, "no recipe's layout recognised")
}

// node is a Node of role for a child read.
func node(role Role, k child) Node {
	return Node{Role: role, Name: k.name, Session: k.stat.EphemeralOwner, Token: k.stat.Czxid,
		Created: time.UnixMilli(k.stat.Ctime), Data: k.data}
}

// common is the origin every node shows, or "" when they differ.
func common(nodes []Node) Origin {
	if len(nodes) == 0 {
		return ""
	}
	for _, n := range nodes[1:] {
		if n.Origin != nodes[0].Origin {
			return ""
		}
	}
	return nodes[0].Origin
}
