package main

import (
	"crypto/sha1"
	"encoding/base64"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/zktest"
)

func newServeCmd(a *app) *cobra.Command {
	var (
		listen         string
		tick           time.Duration
		maxClientCnxns int
		superDigest    string
		reconfig       bool
	)
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR]",
		Short: "Run the bundled reference ZooKeeper server until SIGINT or SIGTERM",
		Long: `Runs zkit's bundled reference server: an in-process server that speaks ZooKeeper's
wire protocol and behaves like a standalone Apache ZooKeeper 3.8 for everything a
client observes (checked against the real one by zkit's differential tests). It keeps
everything in memory. Any ZooKeeper client can use it: zkit, zkCli, Curator, kazoo.

It is for development and tests; production runs Apache ZooKeeper. With -v it logs
every connection and session to stderr.

--max-client-cnxns, --super-digest and --reconfig-enabled are ZooKeeper's
maxClientCnxns, zookeeper.DigestAuthenticationProvider.superDigest and
reconfigEnabled, which peers' test harnesses set: a client address may hold that
many connections (0: no limit); a client that adds digest auth matching the super
digest passes every ACL check; reconfig is answered as a standalone ZooKeeper with
reconfigEnabled=true answers it (Unimplemented) rather than with ReconfigDisabled.`,
		Example: `  zkit serve &
  zkit lock /demo -- echo locked

  # as kazoo's test harness configures ZooKeeper (super password "test")
  zkit serve --super-digest super:D/InIHSb7yEEbrWz8b9l71RjZJU= --reconfig-enabled`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tick <= 0 {
				return usagef("--tick-time %v: must be positive", tick)
			}
			if err := checkListen(listen); err != nil {
				return err
			}
			if maxClientCnxns < 0 {
				return usagef("--max-client-cnxns %d: must be 0 (no limit) or more", maxClientCnxns)
			}
			if superDigest != "" && !isDigest(superDigest) {
				return usagef("--super-digest %q is not user:base64(sha1(user:password))", superDigest)
			}
			opts := []zktest.ServerOption{zktest.ServerTickTime(tick), zktest.ServerMaxClientCnxns(maxClientCnxns)}
			if superDigest != "" {
				opts = append(opts, zktest.ServerSuperDigest(superDigest))
			}
			if reconfig {
				opts = append(opts, zktest.ServerReconfigEnabled())
			}
			if a.verbose { // connections and sessions are logged at Debug
				opts = append(opts, zktest.ServerLogger(slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			}
			srv, err := zktest.StartServer(listen, opts...)
			if err != nil {
				return failf("cannot listen on %s: %v", listen, err)
			}
			defer srv.Close()
			a.emit("zkit reference server listening on "+srv.Addr(), struct {
				Listen string `json:"listen"`
			}{srv.Addr()})
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:2181", "address to listen on (host:port)")
	cmd.Flags().DurationVar(&tick, "tick-time", 2*time.Second, "ZooKeeper tickTime: session timeouts are clamped to [2, 20] ticks")
	cmd.Flags().IntVar(&maxClientCnxns, "max-client-cnxns", 60, "ZooKeeper maxClientCnxns: connections one client address may hold (0: no limit)")
	cmd.Flags().StringVar(&superDigest, "super-digest", "", "ZooKeeper superDigest, user:base64(sha1(user:password)): digest auth that passes every ACL")
	cmd.Flags().BoolVar(&reconfig, "reconfig-enabled", false, "ZooKeeper reconfigEnabled: answer reconfig Unimplemented, as a standalone ZooKeeper with it does, not ReconfigDisabled")
	return cmd
}

// isDigest reports whether s has the form of a digest identity:
// "user:" and the base64 of a SHA-1 sum.
func isDigest(s string) bool {
	_, sum, ok := strings.Cut(s, ":")
	b, err := base64.StdEncoding.DecodeString(sum)
	return ok && err == nil && len(b) == sha1.Size
}

// checkListen refuses a --listen that is not host:port (port 0 to 65535;
// 0 picks a free one) before anything starts: that is a usage error, not
// a failure to listen.
func checkListen(listen string) error {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return usagef("--listen %q is not host:port", listen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("--listen %q: port %q is not 0 to 65535", listen, port)
	}
	return nil
}
