package inspect

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// queueKinds are the node shapes of every lock-like queue: those of the
// registry's queue recipes (zkit's and Curator's), then kazoo's, each
// naming the recipe whose layout its nodes share.
var queueKinds = append(kindsOf(layout.All...), kazooLockKind, kazooReadKind, kazooWriteKind)

// kindsOf are the node shapes of the queue recipes of ls, from their
// layouts: a shared node (a reader's) waits only for lower exclusive ones.
func kindsOf(ls ...*layout.Recipe) []recipes.Kind {
	var out []recipes.Kind
	for _, l := range ls {
		for _, m := range l.Queue {
			out = append(out, recipes.Kind{Marker: m, Exclusive: !slices.Contains(l.Shared, m), Recipe: l.Name})
		}
	}
	return out
}

// queue recognises a lock, a read/write lock or an election: a directory
// of sequence nodes. Where the nodes of several are, the recipe is the
// first of them in the registry's order (layout.All: an election beside a
// lock), and the others' nodes are named in a note.
func queue(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	names, byName := index(kids)
	has := map[string]bool{} // the recipes whose nodes are here
	kazooLock := false
	for _, n := range recipes.SortNodes(names, queueKinds...) {
		has[n.Kind.Recipe] = true
		kazooLock = kazooLock || n.Kind == kazooLockKind
	}
	i := slices.IndexFunc(layout.All, func(l *layout.Recipe) bool { return len(l.Queue) > 0 && has[l.Name] })
	if i < 0 {
		return false, nil
	}
	r.Kind = Kind(layout.All[i].Name)
	var kinds []recipes.Kind
	for _, k := range queueKinds {
		if k.Recipe == layout.All[i].Name {
			kinds = append(kinds, k)
		}
	}
	nodes := recipes.SortNodes(names, kinds...)
	r.Nodes = turns(nodes, r.Kind, byName)
	if r.Kind == Lock && kazooLock {
		r.Notes = append(r.Notes, "a kazoo Election has a kazoo Lock's layout: its holder leads")
	}
	if hasBoth(nodes) {
		r.Notes = append(r.Notes, "kazoo's nodes and zkit's or Curator's on one path do not see each other: each side has its holder")
	}
	if n := others(names, nodes); n != "" {
		r.Notes = append(r.Notes, "not this "+string(r.Kind)+"'s nodes, not shown (another recipe's?): "+n)
	}
	return true, nil
}

// maxOthers bounds the names of other nodes a note lists.
const maxOthers = 5

// others names the children that are none of nodes, for a note: "" when
// there are none.
func others(names []string, nodes []recipes.Node) string {
	in := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		in[n.Name] = true
	}
	var out []string
	for _, name := range names {
		if !in[name] {
			out = append(out, strconv.Quote(name))
		}
	}
	if len(out) > maxOthers {
		out = append(out[:maxOthers], "and "+strconv.Itoa(len(out)-maxOthers)+" more")
	}
	return strings.Join(out, ", ")
}

// turns orders a queue into holders and waiters (leader and candidates
// for an election). zkit and Curator do not see kazoo's nodes, nor kazoo
// theirs: each side's lowest nodes hold, whatever the other side holds.
func turns(nodes []recipes.Node, kind Kind, byName map[string]child) []Node {
	var held, queued []Node
	for i, n := range nodes {
		k := byName[n.Name]
		out := node(Waiter, k)
		out.Token = recipes.TokenOf(k.stat.Czxid)
		if !blocked(nodes[:i], n) {
			out.Role = Holder
		}
		out.Origin, out.ID = queueOrigin(n, k.data), string(k.data)
		switch {
		case kind == RWLock && n.Kind.Exclusive:
			out.Mode = "write"
		case kind == RWLock:
			out.Mode = "read"
		}
		if kind == Election {
			out.Role = map[Role]Role{Holder: Leader, Waiter: Candidate}[out.Role]
		}
		if out.Role == Holder || out.Role == Leader {
			held = append(held, out)
		} else {
			queued = append(queued, out)
		}
	}
	return append(held, queued...)
}

// blocked reports whether a node lower than n, on n's side, makes it wait.
func blocked(lower []recipes.Node, n recipes.Node) bool {
	for _, l := range lower {
		if isKazoo(l.Kind) == isKazoo(n.Kind) && l.Blocks(n) {
			return true
		}
	}
	return false
}

// hasBoth reports kazoo's nodes and others in one queue.
func hasBoth(nodes []recipes.Node) bool {
	k, o := false, false
	for _, n := range nodes {
		if isKazoo(n.Kind) {
			k = true
		} else {
			o = true
		}
	}
	return k && o
}

// leaseKind is the shape of a zkit or Curator semaphore's leases
// (layout.Semaphore).
var leaseKind = recipes.Kind{Marker: layout.LeaseMarker, Recipe: layout.Semaphore.Name}

// semaphore recognises InterProcessSemaphoreV2's layout
// (layout.Semaphore): the lease nodes hold, the nodes of the lock in front
// of them wait. A directory holding only the lock's directory is one only
// if lock nodes wait there.
func semaphore(ctx context.Context, rd *reader, r *Report, kids []child) (bool, error) {
	if !layout.Semaphore.Fits(sighting(r, kids)) {
		return false, nil
	}
	hasLeases := slices.ContainsFunc(kids, func(k child) bool { return k.name == layout.LeasesDir })
	notes := len(r.Notes)
	leases, err := sequenced(ctx, rd, r, client.JoinPath(r.Path, layout.LeasesDir), layout.LeasesDir+"/", leaseKind, Holder)
	if err != nil {
		r.Notes = r.Notes[:notes]
		return false, probeErr(err)
	}
	waiters, err := sequenced(ctx, rd, r, client.JoinPath(r.Path, layout.LocksDir), layout.LocksDir+"/", kindsOf(layout.Lock)[0], Waiter)
	if err != nil || !hasLeases && len(waiters) == 0 {
		r.Notes = r.Notes[:notes]
		return false, probeErr(err)
	}
	r.Kind, r.Nodes = Semaphore, append(leases, waiters...)
	if len(waiters) > 0 {
		r.Notes = append(r.Notes, "the first waiter holds the semaphore's lock and waits for a lease")
	}
	return true, nil
}

// sequenced reads the nodes of kind in dir, in sequence order, named
// prefix+<name>, in role.
// The other children of dir are named in a note added to r.
func sequenced(ctx context.Context, rd *reader, r *Report, dir, prefix string, kind recipes.Kind, role Role) ([]Node, error) {
	kids, err := rd.list(ctx, dir)
	if err != nil {
		return nil, err
	}
	names, byName := index(kids)
	nodes := recipes.SortNodes(names, kind)
	if n := others(names, nodes); n != "" {
		r.Notes = append(r.Notes, "in "+dir+", not "+kind.Recipe+" nodes, not shown: "+n)
	}
	var out []Node
	for _, n := range nodes {
		k := byName[n.Name]
		o := node(role, k)
		o.Token = recipes.TokenOf(k.stat.Czxid)
		o.Name = prefix + k.name
		o.Origin, o.ID = queueOrigin(n, k.data), string(k.data)
		out = append(out, o)
	}
	return out, nil
}

// kazooSemaphore recognises kazoo's Semaphore: lease nodes named by a
// UUID in 32 hex digits (data: the holder's identifier), the maximum in
// the path's data, and a kazoo Lock at "<path>-__lock__" for the waiters.
func kazooSemaphore(ctx context.Context, rd *reader, r *Report, kids []child) (bool, error) {
	if r.Path == "/" || r.Stat.EphemeralOwner != 0 {
		return false, nil
	}
	for _, k := range kids {
		if !isKazooID(k.name) || k.stat.EphemeralOwner == 0 {
			return false, nil
		}
	}
	lock := r.Path + kazooLockSuffix
	ok, _, err := rd.exists(ctx, lock)
	if err != nil || !ok {
		return false, err
	}
	r.Kind, r.Origin = Semaphore, Kazoo
	for _, k := range kids {
		n := node(Holder, k)
		n.Origin, n.ID = Kazoo, string(k.data)
		r.Nodes = append(r.Nodes, n)
	}
	waiters, err := sequenced(ctx, rd, r, lock, "../"+lock[strings.LastIndex(lock, "/")+1:]+"/", kazooLockKind, Waiter)
	if err := unlessNoAuth(err); err != nil {
		return true, err
	}
	r.Nodes = append(r.Nodes, waiters...)
	if max, err := strconv.Atoi(string(r.Data)); err == nil {
		r.Notes = append(r.Notes, "kazoo Semaphore: at most "+strconv.Itoa(max)+" leases (the path's data); waiters queue at "+lock)
	}
	return true, nil
}
