package main

import (
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/zktest"
)

func newServeCmd(a *app) *cobra.Command {
	var (
		listen string
		tick   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR]",
		Short: "Run the bundled reference ZooKeeper server until SIGINT or SIGTERM",
		Long: `Runs zkit's bundled reference server: an in-process server that speaks ZooKeeper's
wire protocol and behaves like a standalone Apache ZooKeeper 3.8 for everything a
client observes (checked against the real one by zkit's differential tests). It keeps
everything in memory. Any ZooKeeper client can use it: zkit, zkCli, Curator, kazoo.

It is for development and tests; production runs Apache ZooKeeper. With -v it logs
every connection and session to stderr.`,
		Example: `  zkit serve &
  zkit lock /demo -- echo locked`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tick <= 0 {
				return usagef("--tick-time %v: must be positive", tick)
			}
			if err := checkListen(listen); err != nil {
				return err
			}
			opts := []zktest.ServerOption{zktest.ServerTickTime(tick)}
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
	return cmd
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
