package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
)

type discoverFlags struct {
	address   string
	port      int
	sslPort   int
	uriSpec   string
	payload   string
	disabled  bool
	tolerance time.Duration
}

// registerOnly are the flags that only register takes.
var registerOnly = []string{"address", "port", "ssl-port", "uri-spec", "payload", "disabled", "tolerance"}

func newDiscoverCmd(a *app) *cobra.Command {
	var f discoverFlags
	cmd := &cobra.Command{
		Use:   "discover BASE register NAME ID [--address A] [--port N] [-- CMD [ARGS]] | list [NAME] | watch NAME",
		Short: "Register a service instance (while CMD runs), list services and instances, or watch a service",
		Long: `Service discovery under BASE, in the layout of Curator's x-discovery (ServiceDiscovery):
each instance of service NAME is an ephemeral node BASE/NAME/ID holding a JSON ServiceInstance,
so that Java services using Curator and zkit find each other.

  register NAME ID  registers instance ID of service NAME (--address, --port, --ssl-port,
              --uri-spec such as '{scheme}://{address}:{port}', --payload as JSON,
              --disabled) and keeps it registered until SIGINT/SIGTERM, registering it
              again by itself after a lost session. With -- CMD it runs CMD while the
              instance is present: CMD gets ZKIT_INSTANCE_NODE, ZKIT_INSTANCE_ID and
              ZKIT_SERVICE, and if the instance may no longer be present (session lost,
              connection suspended longer than --tolerance, node deleted) CMD gets
              SIGTERM and zkit exits with status 5. An ID held by another live session
              is an error: two processes never share one ID.
  list        prints the services, one name a line, sorted (-o json: {"name":NAME}).
  list NAME   prints the instances of NAME, one JSON ServiceInstance a line (as Curator
              stores it), sorted by ID.
  watch NAME  prints every instance of NAME as one JSON array whenever one is registered,
              unregistered or changed, until SIGINT/SIGTERM; the last line is the set.

register without CMD prints the instance's node (-o json: {"node":NODE}); list NAME
and watch print JSON whatever -o says.`,
		Example: `  zkit discover /services register api "$(hostname)" --address 10.0.0.5 --port 8080 -- ./serve
  zkit discover /services list api | jq -r '"\(.address):\(.port)"'
  zkit discover /services watch api | jq -c 'map(.id)'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			before, argv := args, []string(nil)
			if i := cmd.ArgsLenAtDash(); i >= 0 {
				before, argv = args[:i], args[i:]
			}
			if len(before) < 2 {
				return usagef("missing BASE and action (zkit discover BASE register NAME ID | list [NAME] | watch NAME)")
			}
			base, action, rest := before[0], before[1], before[2:]
			if reason := client.ValidatePath(base, false); reason != "" {
				return usagef("invalid BASE %q: %s", base, reason)
			}
			if action != "register" {
				for _, name := range registerOnly {
					if cmd.Flags().Changed(name) {
						return usagef("--%s is for register", name)
					}
				}
			}
			switch {
			case action == "register" && len(rest) == 2:
				inst, err := f.instance(base, rest[0], rest[1])
				if err != nil {
					return err
				}
				return a.discoverRegister(cmd.Context(), base, inst, argv, f.tolerance)
			case action == "register":
				return usagef("register takes NAME and ID (zkit discover BASE register NAME ID [-- CMD])")
			case action != "list" && action != "watch":
				return usagef("unknown action %q (want register, list or watch)", action)
			case argv != nil:
				return usagef("%s runs no CMD", action)
			case action == "list" && len(rest) == 0:
				return a.discoverServices(cmd.Context(), base)
			case len(rest) != 1:
				return usagef("%s takes one NAME", action)
			}
			if name := rest[0]; name == "" || strings.Contains(name, "/") || client.ValidatePath(client.JoinPath(base, name), false) != "" {
				return usagef("invalid service NAME %q", name)
			}
			if action == "list" {
				return a.discoverList(cmd.Context(), base, rest[0])
			}
			return a.discoverWatch(cmd.Context(), base, rest[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.address, "address", "", "the instance's address (register; default none)")
	fl.IntVar(&f.port, "port", 0, "the instance's port (register; default none)")
	fl.IntVar(&f.sslPort, "ssl-port", 0, "the instance's SSL port (register; default none)")
	fl.StringVar(&f.uriSpec, "uri-spec", "", "the instance's URI template, as Curator's UriSpec (register)")
	fl.StringVar(&f.payload, "payload", "", "the instance's payload, as JSON (register)")
	fl.BoolVar(&f.disabled, "disabled", false, "register the instance disabled: providers do not pick it (register)")
	fl.DurationVar(&f.tolerance, "tolerance", 0, "how long the connection may stay suspended before the instance counts as absent (register)")
	return cmd
}

// instance builds the instance to register from the flags, refusing what
// Register would refuse.
func (f discoverFlags) instance(base, name, id string) (discovery.Instance, error) {
	inst := discovery.Instance{Name: name, ID: id, Address: f.address, Port: f.port, SSLPort: f.sslPort, Disabled: f.disabled}
	if f.uriSpec != "" {
		spec, err := discovery.ParseURISpec(f.uriSpec)
		if err != nil {
			return inst, usagef("--uri-spec %q: %v", f.uriSpec, err)
		}
		inst.URISpec = spec
	}
	if f.payload != "" {
		if !json.Valid([]byte(f.payload)) {
			return inst, usagef("--payload %q is not JSON (a string payload is quoted: '\"text\"')", f.payload)
		}
		inst.Payload = json.RawMessage(f.payload)
	}
	if err := discovery.CheckInstance(base, inst); err != nil {
		return inst, usagef("%v", oneLine(err))
	}
	if f.tolerance < 0 {
		return inst, usagef("--tolerance %v: must not be negative", f.tolerance)
	}
	return inst, nil
}

func (a *app) discoverRegister(ctx context.Context, base string, inst discovery.Instance, argv []string, tolerance time.Duration) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := discovery.New(c, base, discovery.WithSuspendTolerance(tolerance)).Register(ctx, inst)
	var ce *discovery.ConflictError
	switch {
	case errors.As(err, &ce) && ce.Owner == 0:
		return failf("%s/%s: ID %q is taken by a persistent node, no instance's; pick another ID, or delete it ('zkit delete %s')", base, inst.Name, inst.ID, ce.Path)
	case errors.As(err, &ce):
		return failf("%s/%s: ID %q is held by session 0x%x; pick another ID, or wait until that process ends", base, inst.Name, inst.ID, ce.Owner)
	case err != nil:
		return failf("%v", err) // it names the instance's node
	}
	defer unregister(r)
	if len(argv) == 0 {
		a.emit(printable(r.Node()), nodeJSON{r.Node()})
		return a.stayRegistered(ctx, r)
	}
	// CMD runs while the presence Register returned lasts, not across a gap.
	status, lost, err := a.runWhileHeld(ctx, r.Presence(), argv,
		"ZKIT_INSTANCE_NODE="+r.Node(), "ZKIT_INSTANCE_ID="+inst.ID, "ZKIT_SERVICE="+inst.Name)
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("instance %s of %s absent while %s ran: %v", inst.ID, inst.Name, argv[0], lost)
	}
	return cmdStatus(status)
}

// stayRegistered keeps r registered until zkit is stopped, saying on
// stderr when the instance is absent and present again. It fails when the
// registration ends for good (a conflict).
func (a *app) stayRegistered(ctx context.Context, r *discovery.Registration) error {
	return a.stay(ctx, r.Present, "discover", r.Node(), "absent", "present again")
}

// unregister ends a registration, waiting a bounded time for the delete.
func unregister(r *discovery.Registration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.Unregister(ctx)
}

func (a *app) discoverServices(ctx context.Context, base string) error {
	c, err := a.connectToRead(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	names, err := discovery.New(c, base).Services(ctx)
	if err != nil {
		return failf("%v", err) // it names the base
	}
	for _, name := range names {
		a.emit(printable(name), struct {
			Name string `json:"name"`
		}{name})
	}
	return nil
}

func (a *app) discoverList(ctx context.Context, base, name string) error {
	c, err := a.connectToRead(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	instances, err := discovery.New(c, base).Instances(ctx, name)
	if err != nil {
		return failf("%v", err) // it names the service's node
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	for _, inst := range instances {
		if err := enc.Encode(inst); err != nil {
			return failf("%s: %v", inst.Path, err)
		}
	}
	return nil
}

func (a *app) discoverWatch(ctx context.Context, base, name string) error {
	c, err := a.connectToWait(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	feed := discovery.New(c, base).Watch(ctx, name)
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	for instances := range feed.Values() {
		if instances == nil {
			instances = []discovery.Instance{}
		}
		if err := enc.Encode(instances); err != nil {
			return failf("%s/%s: %v", base, name, err)
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return failf("%v", feed.Err()) // it names the service's node
}
