package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// readyName is the flag node of a double barrier and of a configuration.
const readyName = recipes.ReadyName

// barrier recognises a double barrier: ephemeral members named by UUIDs
// (Curator's and zkit's in canonical form, kazoo's in 32 hex digits),
// and the ready node while a round is past its threshold. Members are in
// name order, the order they leave in: the first leaves last.
func barrier(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	ready := false
	var members []Node
	for _, k := range kids {
		switch {
		case k.name == readyName:
			ready = true
		case (recipes.IsBarrierMember(k.name) || isKazooID(k.name)) && k.stat.EphemeralOwner != 0:
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

// config recognises a configuration: persistent keys without children,
// and the ready flag.
func config(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	ready := false
	var keys []Node
	for _, k := range kids {
		switch {
		case k.stat.EphemeralOwner != 0 || k.stat.NumChildren > 0:
			return false, nil
		case k.name == readyName:
			ready = true
		default:
			keys = append(keys, node(Key, k))
		}
	}
	if !ready {
		return false, nil
	}
	r.Kind, r.Nodes, r.Ready = Config, keys, &ready
	return true, nil
}

// group recognises group membership: ephemeral members named by their
// ids (Curator's GroupMember, zkit's membership), or kazoo's Party
// members "<hex>__party__" whose data is their identifier (their ID).
func group(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	var members []Node
	for _, k := range kids {
		if k.stat.EphemeralOwner == 0 || k.stat.NumChildren > 0 {
			return false, nil
		}
		n := node(Member, k)
		if hex, ok := strings.CutSuffix(k.name, kazooPartyMarker); ok && isKazooID(hex) {
			n.Origin, n.ID = Kazoo, string(k.data)
		}
		members = append(members, n)
	}
	r.Kind, r.Nodes = Group, members
	return true, nil
}

// service recognises a discovery service: every child an x-discovery
// instance.
func service(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	nodes, ok := instances(kids, "")
	if ok {
		r.Kind, r.Nodes = Discovery, nodes
	}
	return ok, nil
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

// instanceJSON is what an x-discovery instance's JSON must carry.
type instanceJSON struct {
	Name       *string `json:"name"`
	ID         *string `json:"id"`
	Registered *int64  `json:"registrationTimeUTC"`
}

// instances reads kids as x-discovery instances, named prefix+<name>.
func instances(kids []child, prefix string) ([]Node, bool) {
	var out []Node
	for _, k := range kids {
		var in instanceJSON
		if k.stat.NumChildren > 0 || json.Unmarshal(k.data, &in) != nil || in.Name == nil || in.ID == nil || in.Registered == nil {
			return nil, false
		}
		n := node(Instance, k)
		n.Name, n.ID, n.Service = prefix+k.name, *in.ID, *in.Name
		out = append(out, n)
	}
	return out, len(out) > 0
}
