package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
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

	stdin          io.Reader
	stdout, stderr io.Writer

	started bool // the command's own code ran: errors after this are not usage errors
}

// execute runs zkit with args and returns the exit status. SIGINT and
// SIGTERM cancel the command's context.
func execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
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
	line := oneLine(err)
	if statusOf(err) == exitUsage {
		line += fmt.Sprintf(" (see '%s --help')", name)
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, line)
	return statusOf(err)
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "zkit",
		Short: "ZooKeeper recipes from the shell, a bundled ZooKeeper server, and a demo",
		Long: `zkit runs ZooKeeper's coordination recipes from the shell (hold a lock or a
leadership while a command runs, count, wait at a barrier, watch configuration and
group membership), serves the bundled reference ZooKeeper server, and demonstrates
every recipe with its invariants checked.

Servers: --servers host:port,..., else $ZKIT_SERVERS, else ` + defaultServers + `.
TLS: --tls-ca (the CA that signed the servers' certificates) turns it on, for servers'
secureClientPort; --tls-cert and --tls-key present a client certificate, which
ZooKeeper's x509 provider takes as the client's identity.
Global flags may appear anywhere on the line.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRun: func(*cobra.Command, []string) {
			a.started = true
		},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef("%v", err) })
	root.SetUsageTemplate(root.UsageTemplate() + "\n" + exitHelp)

	pf := root.PersistentFlags()
	pf.StringVar(&a.servers, "servers", "", "ZooKeeper servers, host:port,... (default $ZKIT_SERVERS, else "+defaultServers+")")
	pf.DurationVar(&a.sessionTimeout, "session-timeout", client.DefaultSessionTimeout, "session timeout to ask the servers for")
	pf.DurationVar(&a.connectTimeout, "connect-timeout", 10*time.Second, "how long to wait for a first session")
	pf.StringVar(&a.tlsCA, "tls-ca", "", "connect over TLS, trusting the CA certificates in this PEM file")
	pf.StringVar(&a.tlsCert, "tls-cert", "", "connect over TLS with this client certificate (PEM; needs --tls-key)")
	pf.StringVar(&a.tlsKey, "tls-key", "", "the private key of --tls-cert (PEM)")

	root.AddCommand(
		newDemoCmd(a),
		newServeCmd(a),
		newLockCmd(a),
		newSemaphoreCmd(a),
		newElectCmd(a),
		newCounterCmd(a),
		newMembersCmd(a),
		newRendezvousCmd(a),
		newBarrierCmd(a),
		newConfigCmd(a),
		newBenchCmd(a),
		newVersionCmd(a),
	)
	return root
}

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
