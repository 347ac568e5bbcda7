// Package discovery is service discovery on ZooKeeper in the node layout
// and JSON of Curator's x-discovery (ServiceDiscovery, ServiceProvider):
// each instance of a service is an ephemeral node
// "<base>/<service>/<instance id>" whose data is a JSON ServiceInstance
// (name, id, address, port, sslPort, payload, registrationTimeUTC,
// serviceType, uriSpec, enabled). Go services using zkit and Java services
// using Curator find each other.
//
//	d := discovery.New(c, "/services") // no I/O
//	r, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "a-1", Address: "10.0.0.5", Port: 8080})
//	...
//	defer r.Unregister(ctx)
//	all, err := d.Instances(ctx, "api")  // sorted by node name
//	feed := d.Watch(ctx, "api")          // every instance, whenever one changes
//	p := d.Provider(ctx, "api")          // round robin over the live view
//	inst, err := p.Pick(ctx)
//
// # Registering
//
// [Discovery.Register] creates the instance's node and keeps it present,
// as package membership keeps a member (on recipes.Keep): it is created
// again under each new session, after someone deleted it, and adopted
// again after a reconnect. Each stretch of time during which the instance
// is known to be present is a [Presence]; [Registration.Done] is the
// current one's, closed as soon as the instance may no longer be present,
// including while the connection is suspended beyond the tolerance
// ([WithSuspendTolerance], default 0: at once). [Registration.Present]
// waits until it is present again. Writes that must only happen while the
// instance is registered go through [Registration.Multi] (or carry
// [Registration.Guard]).
//
// Two processes claiming one id are a conflict, never a silent takeover:
// Register returns a [*ConflictError] when another live session owns the
// node, and a registration whose node another process writes or creates
// again stops with one; zkit never deletes a node it does not own.
// Curator's ServiceDiscovery, by contrast, deletes an existing node of its
// id and creates its own, while zkit, keeping its instance present,
// creates its node again as soon as it is deleted: either may end up
// holding the id, never both (in the tests zkit does, and Curator's
// registerService returns without error, its instance missing). Give
// every process its own id.
//
// zkit registers Dynamic instances only (ephemeral nodes, Curator's
// default); Static, Permanent and DynamicSequential instances that Curator
// writes are read like any other.
//
// # Finding
//
// [Discovery.Services], [Discovery.Instances] and [Discovery.Instance] read
// the registry once. [Discovery.Watch] streams every instance of a
// service, level-triggered (on recipes.Follow): after churn, a burst or a
// reconnect the last snapshot delivered is the true set. A [Provider]
// picks one instance at a time from such a live view, with one of
// Curator's strategies ([RoundRobin], [Random], [Sticky]), leaving out
// disabled instances and those its caller noted down
// ([Provider.NoteError]).
//
// # The JSON
//
// [Instance] is written and read as Curator's JsonInstanceSerializer does;
// see its fields for how Go values map to Curator's. Two things need care
// across languages. A payload that Java reads as an object of its own
// class must carry Jackson's "@class" member ([JavaPayload]); a payload
// without one reaches a Java service whose payload class is Object or Map
// only. And members of an instance that zkit does not know (from a newer
// Curator, another client) are kept in [Instance.Extra] and written back
// as they were: round-trip, not dropped. Curator itself ignores members it
// does not know.
//
// # Errors
//
// Input is checked before anything is sent: an [*client.InputError] for an
// invalid base, an empty service name or id, a name or id with "/", an
// instance whose JSON is over the server's limit ([CheckInstance]). Every
// other error names the call and the path once; match it with errors.Is
// against this package's [ErrLost], [ErrConflict], [ErrNoInstance] and the
// others, or client.ErrClosed once the client is closed.
package discovery
