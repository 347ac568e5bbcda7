package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Services returns the names of the services under the base, sorted
// (Curator's queryForNames). A service whose last instance is gone may
// still be listed until the server deletes its node. A base that does not
// exist has no services. An invalid base is an *client.InputError,
// before anything is sent.
func (d *Discovery) Services(ctx context.Context) ([]string, error) {
	if err := client.CheckPath("services", d.base); err != nil {
		return nil, err
	}
	names, _, err := d.c.Children(ctx, d.base)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, recipes.Wrap("services", d.base, err)
	}
	slices.Sort(names)
	return names, nil
}

// Instances returns the instances of service, sorted by node name
// (Curator's queryForInstances), disabled ones included, each with its
// Path and Stat. Nodes whose data is not an instance are left out (and
// logged, WithLogger). A service without a node has no instances. An
// invalid base or service name is an *client.InputError, before anything
// is sent.
func (d *Discovery) Instances(ctx context.Context, service string) ([]Instance, error) {
	if err := recipes.CheckName("instances", d.base, "service name", service); err != nil {
		return nil, err
	}
	path := client.JoinPath(d.base, service)
	found, err := recipes.ReadChildren(ctx, d.c, path, d.decoder(path))
	return found, recipes.Wrap("instances", path, err)
}

// Instance returns the instance id of service (Curator's
// queryForInstance), with its Path and Stat. It returns an error matching
// ErrNoInstance when there is no such node, ErrMalformed when its data is
// not an instance, and an *client.InputError for an invalid base, service
// name or id, before anything is sent.
func (d *Discovery) Instance(ctx context.Context, service, id string) (Instance, error) {
	if err := recipes.CheckName("instance", d.base, "service name", service); err != nil {
		return Instance{}, err
	}
	path := client.JoinPath(d.base, service)
	if err := recipes.CheckName("instance", path, "instance id", id); err != nil {
		return Instance{}, err
	}
	node := client.JoinPath(path, id)
	data, st, err := d.c.Get(ctx, node)
	switch {
	case errors.Is(err, client.ErrNoNode):
		return Instance{}, recipes.Wrap("instance", node, ErrNoInstance)
	case err != nil:
		return Instance{}, recipes.Wrap("instance", node, err)
	}
	inst, err := decode(node, data, st)
	return inst, recipes.Wrap("instance", node, err)
}

// decode reads the instance stored at node.
func decode(node string, data []byte, st *client.Stat) (Instance, error) {
	inst := Instance{Path: node, Stat: st}
	if err := json.Unmarshal(data, &inst); err != nil {
		return Instance{}, &malformedError{err: err, size: len(data)}
	}
	return inst, nil
}

// decoder returns what reads the instances of the service at path,
// leaving out (and logging) the nodes whose data is not an instance.
func (d *Discovery) decoder(path string) recipes.Decode[Instance] {
	log := d.cfg.Log()
	return func(id string, data []byte, st *client.Stat) *Instance {
		node := client.JoinPath(path, id)
		inst, err := decode(node, data, st)
		if err != nil {
			log.Warn("zkit: left out a node that is not a service instance", "node", node, "err", err)
			return nil
		}
		return &inst
	}
}

// malformedError is the data of an instance node that does not decode.
type malformedError struct {
	err  error
	size int
}

func (e *malformedError) Error() string {
	return fmt.Sprintf("%s (%d bytes of data): %v", strings.TrimPrefix(ErrMalformed.Error(), "zkit: "), e.size, e.err)
}

func (e *malformedError) Is(target error) bool { return target == ErrMalformed }

func (e *malformedError) Unwrap() error { return e.err }
