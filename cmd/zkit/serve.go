package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// serve runs the reference server until SIGINT or SIGTERM.
func serve(args []string) error {
	fs := flag.NewFlagSet("zkit serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:2181", "address to listen on (host:port)")
	tick := fs.Duration("tick-time", 2*time.Second, "ZooKeeper tickTime: session timeouts are clamped to [2, 20] ticks")
	verbose := fs.Bool("verbose", false, "log connections and sessions to stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return errUsage
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	opts := []zktest.ServerOption{zktest.ServerTickTime(*tick)}
	if *verbose {
		opts = append(opts, zktest.ServerLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := zktest.StartServer(*listen, opts...)
	if err != nil {
		return err
	}
	fmt.Printf("zkit reference server listening on %s\n", srv.Addr())
	<-ctx.Done()
	srv.Close()
	return nil
}
