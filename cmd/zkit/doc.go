// Command zkit is zkit's command-line tool: the recipes for shell scripts
// and operators, the bundled reference server, the demo and the
// benchmarks.
//
//	zkit [--servers host[:port],...[/chroot]] [--namespace /app] [--session-timeout D] [--tls-ca FILE] [-o text|json] [-v] COMMAND [ARGS]
//
// Run "zkit help" for the commands and "zkit help COMMAND" for one of them;
// the exit statuses are listed in the root command's help (exit.go).
//
// # Adding a subcommand
//
// One file per subcommand, named after it, with a constructor
// func newXCmd(a *app) *cobra.Command registered in root.go. The
// constructor uses a's helpers rather than its own plumbing:
//
//   - a.connect(ctx) opens a client with the global flags (--servers and
//     its chroot, --namespace, --session-timeout, --connect-timeout,
//     --tls-ca, --tls-cert, --tls-key, --auth, --auth-file, -v, each also
//     from its ZKIT_ variable) and
//     turns "no server answered" into the unreachable error with its fix,
//     and an untrusted certificate into a failure that says which CA to
//     pass; a.withClient(ctx, fn) runs fn with such a client and closes it.
//     Both create the namespace if it is missing: a command that only
//     reads what is there (ls, get, stat, getacl, inspect, top, counter
//     get, elect --leader and --participants, members list, discover
//     list, config get) uses
//     a.connectToRead and a.withReader instead, which create nothing and
//     fail, saying so, when the namespace is missing, and one that waits
//     for nodes to appear (watch, elect --observe, members watch,
//     discover watch, config watch, rendezvous wait) uses a.connectToWait,
//     which creates nothing and leaves a missing namespace to be waited
//     for as its node is (the recipe's read and watch see ErrNoNode);
//     a.clientOptions() are the same options for code that connects by
//     itself (the demo with --servers);
//   - a.runWhileHeld(ctx, held, argv, env...) runs CMD, in a process group
//     of its own under a supervisor process (supervise.go), while a lock, a
//     term or a membership is held; ends the group when that is lost or
//     zkit gets a stop signal (signals.go); and returns CMD's status or the
//     loss only once no process of the group is left, so that the caller
//     may release;
//   - a.hold(ctx, held, text, v) holds without a CMD until a stop signal;
//     a.sayWaiting(ctx, name, describe) tells a terminal once what a
//     command waits for;
//   - usagef, failf, timeoutf, lostf (exit.go) make the one-line errors
//     with their exit status. Say which path, what happened, and the fix;
//     about and cause keep a path that the cause names already from being
//     said twice. nodePath and a.writablePath check a PATH (the latter
//     refuses the root and /zookeeper, whatever the namespace), and
//     recipePath a recipe's (it refuses the root).
//
// Output that scripts read goes to a.stdout (cmd.OutOrStdout()); nothing
// else is printed there. a.emit(text, v) prints one record: text, with
// printable escaping what is not printable text, or v as a line of JSON
// with -o json.
//
// # Adding a demo step
//
// One file per recipe, demo_<recipe>.go, with step functions of type
// func(ctx context.Context, d *demoEnv) (stepResult, error), listed in
// demoSteps in demo.go. A step opens its own clients (d.connect,
// d.connectAll), counts its operations (d.count), checks its invariant as
// it goes and returns violationf(...) when it does not hold. Steps that need
// the embedded server's fault hooks set embeddedOnly; they are skipped with
// --servers.
//
// A step claims only what it checks, and checks it whatever the timing:
// it brings about the state its claim is about rather than hoping the
// workers run into it (the semaphore's holders keep it full until a waiter
// is refused; the rendezvous master publishes only once every worker has
// read zr; a fault it injects must be seen to strike). A demo test runs the
// step on a recipe broken on purpose, from outside the recipe (a wrapper,
// a smaller or larger limit), and expects a violation at every worker
// count (demo_checks_test.go).
package main
