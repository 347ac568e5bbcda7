// Command service is a whole small zkit service to copy. Its instances
// share one job that only one of them may do at a time:
//
//   - each registers in service discovery (package discovery), and picks
//     peers from the live view of the others with a provider;
//   - each follows its settings with configwatch (ROOT/config);
//   - each mirrors the work node in a tree cache (package cache);
//   - one leads (package election). Each round the leader picks a peer and
//     records the assignment with a write fenced by its term, which the
//     server refuses once the term has ended, even before the old leader
//     notices; then it reads its write back from the cache, read-your-writes.
//
// SIGTERM (or SIGINT) stops an instance gracefully: it resigns, so that
// another instance leads at once rather than after its session timeout,
// unregisters, so that peers stop picking it, and closes its session.
//
// Run two against the bundled reference server, then change their settings:
//
//	go run -C cmd/zkit . serve --listen 127.0.0.1:2181 &
//	go run ./examples/service -id w-1 -addr 127.0.0.1:8081 &
//	go run ./examples/service -id w-2 -addr 127.0.0.1:8082 &
//	go run -C cmd/zkit . config /service/config set interval_ms=500
//
// Layout under -root: election/ (Curator's LeaderLatch layout),
// instances/worker/ (Curator x-discovery's), config/ (configwatch's) and
// work/assignment (JSON: leader, token, peer).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
)

func main() {
	servers := flag.String("servers", "127.0.0.1:2181", "ZooKeeper servers, comma-separated")
	root := flag.String("root", "/service", "the service's node")
	id := flag.String("id", "", "this instance's id, unique within the service (required)")
	addr := flag.String("addr", "127.0.0.1:8080", "host:port where peers reach this instance")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*servers, *root, *id, *addr, log); err != nil {
		log.Error("service", "err", err)
		os.Exit(1)
	}
}

func run(servers, root, id, addr string, log *slog.Logger) error {
	if id == "" {
		return fmt.Errorf("-id is required")
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	// SIGTERM ends ctx, and Run stops gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	c, err := client.Connect(ctx, strings.Split(servers, ","))
	if err != nil {
		return err
	}
	defer c.Close()
	self := discovery.Instance{ID: id, Address: host, Port: port}
	return New(c, root, self, log).Run(ctx)
}
