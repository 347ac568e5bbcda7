package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

// app is what every subcommand shares: the global flags and the standard
// streams.
type app struct {
	servers        string // "" means $ZKIT_SERVERS, else 127.0.0.1:2181
	sessionTimeout time.Duration
	connectTimeout time.Duration
	tlsCA          string // PEM files; any of them turns TLS on
	tlsCert        string
	tlsKey         string
	killAfter      time.Duration         // how long CMD's group has after its stop signal before SIGKILL
	exitBase       int                   // added to zkit's own exit statuses (exit.go)
	output         string                // "text" or "json": how commands that print data print it
	namespace      string                // --namespace: every path relative to it, as a chroot
	verbose        bool                  // log session and connection events to stderr
	auth           []string              // --auth: SCHEME:CREDENTIAL, each
	authFile       string                // --auth-file: one SCHEME:CREDENTIAL a line
	creds          []workload.Credential // --auth's and --auth-file's, checked (auth.go)

	global  *pflag.FlagSet   // the global flags, for flagSource
	signals <-chan os.Signal // every stop signal zkit gets (signals.go)

	stdin          io.Reader
	stdout, stderr io.Writer

	started bool // the command's own code ran: errors after this are not usage errors
}

// execute runs zkit with args and returns the exit status. A stop signal
// (signals.go) cancels the command's context; a command stopped that way
// before it ran CMD exits with 128+N for signal N.
func execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, signals, stop := notifyStops(context.Background())
	defer stop()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, signals: signals}
	root := newRootCmd(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if !a.started && statusOf(err) == exitFailed {
		// Cobra's own complaints: unknown command or flag, wrong arguments.
		err = usagef("%v", err)
	}
	if err.Error() == "" {
		return statusOf(err) // CMD's status, already explained by CMD
	}
	name := "zkit"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	if s := stoppedBy(ctx); s != 0 {
		fmt.Fprintf(stderr, "%s: stopped by %s\n", name, signalName(s))
		return 128 + int(s)
	}
	line := oneLine(err)
	if statusOf(err) == exitUsage {
		line += fmt.Sprintf(" (see '%s --help')", name)
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, line)
	return exitBaseArg(args) + statusOf(err)
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "zkit",
		Short: "ZooKeeper recipes from the shell, a bundled ZooKeeper server, and a demo",
		Long: `zkit runs ZooKeeper's coordination recipes from the shell (hold a lock or a
leadership while a command runs, count, wait at a barrier, watch configuration and
group membership), inspects and cleans up nodes as zkCli does (ls, get, stat, create,
set, delete, getacl, setacl), serves the bundled reference ZooKeeper server, and
demonstrates every recipe with its invariants checked.

Servers: --servers host:port,..., else $ZKIT_SERVERS, else ` + defaultServers + `; as with
ZooKeeper's own clients, a server without a port is at ` + defaultPort + `, an IPv6 address goes in
brackets ([::1]:2181, [::1]), and a chroot after the last server (host:port,host:port/app)
roots every path at /app. A command that writes creates the chroot if it is missing, one
that only reads (ls, get, stat, getacl, inspect, top, counter get, elect --leader,
members list, discover list, config get) creates nothing and fails, saying so, and one
that waits for nodes to appear (watch, elect --observe, members watch, discover watch,
config watch, rendezvous wait) creates nothing and waits for it as for its node.
--namespace /app does the same (Curator's namespace; give one or the other).
TLS: --tls-ca (the CA that signed the servers' certificates) turns it on, for servers'
secureClientPort; --tls-cert and --tls-key present a client certificate, which
ZooKeeper's x509 provider takes as the client's identity.
Global flags may appear anywhere on the line. Each has an environment variable, which
the flag overrides: ZKIT_SERVERS, ZKIT_SESSION_TIMEOUT, ZKIT_CONNECT_TIMEOUT,
ZKIT_TLS_CA, ZKIT_TLS_CERT, ZKIT_TLS_KEY, ZKIT_AUTH, ZKIT_AUTH_FILE, ZKIT_KILL_AFTER,
ZKIT_EXIT_BASE, ZKIT_OUTPUT, ZKIT_VERBOSE, ZKIT_NAMESPACE.
` + authHelp + `

A command that waits its turn (lock, elect, semaphore, barrier) says once on stderr
what it waits for when stderr is a terminal: its place in line and the node ahead,
the leases held, the members in.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.started = true
			return a.checkGlobals()
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef("%v", err) })
	root.SetUsageTemplate(usageTemplate(root.UsageTemplate()))

	pf := root.PersistentFlags()
	a.global = pf
	pf.StringVar(&a.servers, "servers", "", "ZooKeeper servers, host[:port],...[/chroot] (port "+defaultPort+" if none; default $ZKIT_SERVERS, else "+defaultServers+")")
	pf.DurationVar(&a.sessionTimeout, "session-timeout", client.DefaultSessionTimeout, "session timeout to ask the servers for")
	pf.DurationVar(&a.connectTimeout, "connect-timeout", 10*time.Second, "how long to wait for a first session")
	pf.StringVar(&a.tlsCA, "tls-ca", "", "connect over TLS, trusting the CA certificates in this PEM file")
	pf.StringVar(&a.tlsCert, "tls-cert", "", "connect over TLS with this client certificate (PEM; needs --tls-key)")
	pf.StringVar(&a.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")
	pf.StringArrayVar(&a.auth, "auth", nil, "add these credentials to the session, SCHEME:CREDENTIAL (digest:USER:PASSWORD; repeatable)")
	pf.StringVar(&a.authFile, "auth-file", "", "add the credentials in this file to the session, one SCHEME:CREDENTIAL a line (kept out of the process list)")
	pf.DurationVar(&a.killAfter, "kill-after", defaultKillAfter, "commands that run CMD: how long CMD's processes have after their stop signal before SIGKILL")
	pf.StringVar(&a.namespace, "namespace", "", "root every path at this node, created if missing by a command that writes (as a chroot in --servers is)")
	pf.StringVarP(&a.output, "output", "o", "text", "how commands that print data print it: text, or json (one object per line)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log the session's and the connection's events to stderr (serve: the server's connections and sessions)")
	pf.IntVar(&a.exitBase, "exit-base", 0, fmt.Sprintf("add `B` (0 to %d) to zkit's own exit statuses 1-5, to tell them from CMD's", maxExitBase))

	root.AddCommand(
		newDemoCmd(a),
		newServeCmd(a),
		newLockCmd(a),
		newSemaphoreCmd(a),
		newElectCmd(a),
		newCounterCmd(a),
		newMembersCmd(a),
		newDiscoverCmd(a),
		newRendezvousCmd(a),
		newBarrierCmd(a),
		newConfigCmd(a),
		newWatchCmd(a),
		newInspectCmd(a),
		newTopCmd(a),
		newBenchCmd(a),
		newLsCmd(a),
		newGetCmd(a),
		newStatCmd(a),
		newCreateCmd(a),
		newSetCmd(a),
		newDeleteCmd(a),
		newGetACLCmd(a),
		newSetACLCmd(a),
		newDigestCmd(a),
		newEnsembleCmd(a),
		newVersionCmd(a),
	)
	// "zkit help TOPIC" of no command is a usage error, as "zkit TOPIC" is
	// (cobra's own help prints its usage and succeeds).
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if run := c.Run; c.Name() == "help" && run != nil {
			c.Run, c.RunE = nil, func(cmd *cobra.Command, args []string) error {
				if found, _, err := cmd.Root().Find(args); found == nil || err != nil {
					return usagef("unknown help topic %q", strings.Join(args, " "))
				}
				run(cmd, args)
				return nil
			}
		}
	}
	for _, c := range root.Commands() {
		switch c.Name() {
		case "lock", "elect", "semaphore", "members", "discover", "rendezvous", "barrier":
			c.Long += "\n\n" + runHelp
		}
	}
	return root
}

// usageTemplate is cobra's usage template with the global flags and the
// exit statuses in the root's help alone: a subcommand's help points
// there instead of repeating them.
func usageTemplate(cobras string) string {
	const global = `{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`
	if !strings.Contains(cobras, global) {
		panic("cobra's usage template changed: the global flags are not where zkit looks for them")
	}
	return strings.Replace(cobras, global, `{{if .HasAvailableInheritedFlags}}

Global flags (--servers, --session-timeout, --tls-ca, -o, -v, ...) and the exit
statuses: see 'zkit --help'.{{end}}`, 1) + `{{if not .HasParent}}
` + exitHelp + `{{end}}`
}

// checkGlobals sets the global flags not on the command line from their
// environment variables, and checks them all before anything starts.
func (a *app) checkGlobals() error {
	if err := flagsFromEnv(a.global); err != nil {
		return err
	}
	if a.global.Changed("servers") {
		if err := a.checkServers(); err != nil {
			return err
		}
	}
	from := a.flagSource
	switch {
	case a.sessionTimeout <= 0:
		return usagef("%s %v: must be positive", from("session-timeout"), a.sessionTimeout)
	case a.sessionTimeout > maxSessionTimeout:
		return usagef("%s %v: must be at most %v, the most the protocol carries (servers cap it at their maxSessionTimeout anyway)", from("session-timeout"), a.sessionTimeout, maxSessionTimeout)
	case a.connectTimeout <= 0:
		return usagef("%s %v: must be positive", from("connect-timeout"), a.connectTimeout)
	case a.killAfter < 0:
		return usagef("%s %v: must not be negative", from("kill-after"), a.killAfter)
	case a.exitBase < 0 || a.exitBase > maxExitBase:
		return usagef("%s %d: must be 0 to %d", from("exit-base"), a.exitBase, maxExitBase)
	case a.output != "text" && a.output != "json":
		return usagef("%s %q: must be text or json", from("output"), a.output)
	}
	var err error
	a.creds, err = a.credentials()
	return err
}

// maxSessionTimeout is the longest session timeout a client can ask for:
// the protocol carries it as 32-bit milliseconds.
const maxSessionTimeout = math.MaxInt32 * time.Millisecond

// logger is where -v logs: stderr, from level Info on; nil without -v.
func (a *app) logger() *slog.Logger {
	if !a.verbose {
		return nil
	}
	return slog.New(slog.NewTextHandler(a.stderr, nil))
}

// json reports whether the command's data is to be printed as JSON
// (-o json), one object per line.
func (a *app) json() bool { return a.output == "json" }

// positional checks a command's arguments before "--" (PATH and such)
// and after it (CMD): want names the arguments for the error message.
func positional(cmd *cobra.Command, args []string, n int, want string) (before, after []string, err error) {
	before, after = args, nil
	if i := cmd.ArgsLenAtDash(); i >= 0 {
		before, after = args[:i], args[i:]
	}
	switch {
	case len(before) < n:
		return nil, nil, usagef("missing %s", want)
	case len(before) > n:
		return nil, nil, usagef("unexpected argument %q (want %s)", before[n], want)
	}
	return before, after, nil
}
