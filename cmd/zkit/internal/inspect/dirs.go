package inspect

import (
	"context"
	"errors"
	"strings"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
)

// barrier recognises a double barrier: ephemeral members named by UUIDs
// (layout.DoubleBarrier: Curator's and zkit's, in canonical form; kazoo's
// in 32 hex digits), and the ready node while a round is past its
// threshold. Members are in name order, the order they leave in: the
// first leaves last.
func barrier(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	ready := false
	var members []Node
	for _, k := range kids {
		switch {
		case k.name == layout.ReadyFlag:
			ready = true
		case layout.DoubleBarrier.IsMember(k.layout()) || isKazooID(k.name) && k.stat.EphemeralOwner != 0:
			n := node(Member, k)
			n.Origin = memberOrigin(k.name)
			if n.Origin == Kazoo {
				n.ID = string(k.data)
			}
			members = append(members, n)
		default:
			return false, nil
		}
	}
	if len(members) == 0 {
		return false, nil
	}
	r.Kind, r.Nodes, r.Ready = Barrier, members, &ready
	return true, nil
}

// config recognises a configuration (layout.Configwatch): persistent keys
// without children, and the ready flag.
func config(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	if !layout.Configwatch.Fits(sighting(r, kids)) {
		return false, nil
	}
	ready := true
	r.Kind, r.Ready = Config, &ready
	for _, k := range kids {
		if k.name != layout.ReadyFlag {
			r.Nodes = append(r.Nodes, node(Key, k))
		}
	}
	return true, nil
}

// group recognises group membership (layout.Membership): ephemeral
// members named by their ids (Curator's GroupMember, zkit's membership),
// or kazoo's Party members "<hex>__party__" whose data is their
// identifier (their ID).
func group(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	if !layout.Membership.Fits(sighting(r, kids)) {
		return false, nil
	}
	var members []Node
	for _, k := range kids {
		n := node(Member, k)
		if hex, ok := strings.CutSuffix(k.name, kazooPartyMarker); ok && isKazooID(hex) {
			n.Origin, n.ID = Kazoo, string(k.data)
		}
		members = append(members, n)
	}
	r.Kind, r.Nodes = Group, members
	return true, nil
}

// service recognises a discovery service (layout.Discovery): every child
// an x-discovery instance.
func service(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	if !layout.Discovery.Fits(sighting(r, kids)) {
		return false, nil
	}
	r.Kind = Discovery
	r.Nodes, _ = instances(kids, "")
	return true, nil
}

// maxServices bounds the services a discovery base is probed for.
const maxServices = 1000

// discoveryBase recognises a discovery base: every child a service
// directory, every node in them an x-discovery instance. It reads no
// further than the first child that is not.
func discoveryBase(ctx context.Context, rd *reader, r *Report, kids []child) (bool, error) {
	if len(kids) > maxServices {
		return false, nil
	}
	for _, k := range kids {
		if k.stat.EphemeralOwner != 0 {
			return false, nil
		}
	}
	var all []Node
	for _, k := range kids {
		found, err := rd.list(ctx, client.JoinPath(r.Path, k.name))
		if err != nil {
			return false, probeErr(err)
		}
		nodes, ok := instances(found, k.name+"/")
		if !ok && len(found) > 0 {
			return false, nil
		}
		all = append(all, nodes...)
	}
	if len(all) == 0 {
		return false, nil
	}
	r.Kind, r.Nodes = Discovery, all
	return true, nil
}

// probeErr is err, or nil for a directory too large for a scan to read
// (errTooMany): a scan walks into it, and stops there.
func probeErr(err error) error {
	if errors.Is(err, errTooMany) {
		return nil
	}
	return unlessNoAuth(err)
}

// unlessNoAuth is err, or nil for a node this client may not read: a
// probe below a path that finds one has not found its recipe.
func unlessNoAuth(err error) error {
	if errors.Is(err, client.ErrNoAuth) {
		return nil
	}
	return err
}

// instances reads kids as discovery instances (layout.Discovery), named
// prefix+<name>.
func instances(kids []child, prefix string) ([]Node, bool) {
	var out []Node
	for _, k := range kids {
		service, id, ok := layout.ParseInstance(k.data)
		if k.stat.NumChildren > 0 || !ok {
			return nil, false
		}
		n := node(Instance, k)
		n.Name, n.ID, n.Service = prefix+k.name, id, service
		out = append(out, n)
	}
	return out, len(out) > 0
}
