package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"
)

// WithEnsembleTracker makes the client follow the ensemble's membership, as
// Curator's EnsembleTracker does: it reads the configuration in ConfigNode
// (ZooKeeper 3.5 and later, dynamic reconfiguration) with a watch, and
// whenever a reconfiguration commits it makes the servers of the new
// configuration (participants and observers, at their client addresses)
// the client's servers with UpdateServers, which moves the connection off
// a server that left, and spreads the clients over servers that were
// added. The first read applies too: a client given one server of the
// ensemble learns the others.
//
// A change is applied after a random pause of up to a second, so that
// the clients of an ensemble do not all move at the same moment. Servers
// are named as the configuration names them (its client address, or its
// quorum address's host where the client address is a wildcard such as
// 0.0.0.0).
//
// A move is a reconnection of the same session (see UpdateServers): what
// ends at a suspension ends then. zkit's locks end a lease as soon as the
// connection is suspended unless given a suspend tolerance
// (lock.WithSuspendTolerance); a holder that is to keep its lock while
// the ensemble changes needs one longer than a reconnection.
//
// The tracker runs for as long as the client, under each of its sessions:
// a session lost makes it read the configuration again under the next. It
// does nothing on a server without a dynamic configuration (ConfigNode
// empty, or missing before ZooKeeper 3.5), and logs the reads that fail.
func WithEnsembleTracker() Option {
	return func(c *config) { c.trackEnsemble = true }
}

// maxTrackerPause bounds the random pause before a change is applied.
const maxTrackerPause = time.Second

// trackEnsemble is the tracker's loop (WithEnsembleTracker).
func (c *Client) trackEnsemble(ctx context.Context) {
	var b Backoff
	version := int64(-1) // of the configuration last applied
	for ctx.Err() == nil {
		if _, err := c.WaitConnected(ctx); err != nil {
			return
		}
		data, _, changed, err := c.GetConfigW(ctx)
		switch {
		case errors.Is(err, ErrNoNode):
			c.log.Info("zkit: the servers keep no configuration to track (ZooKeeper before 3.5)")
			return
		case err != nil:
			c.log.Info("zkit: reading the ensemble's configuration", "err", err)
			b.Wait(ctx)
			continue
		}
		b.Reset()
		servers, v := clientServers(data)
		if len(servers) > 0 && v > version {
			if version >= 0 && !c.pause(rand.N(maxTrackerPause)) { // ctx is the client's life
				return
			}
			moved, err := c.UpdateServers(servers)
			c.log.Info("zkit: the ensemble's configuration", "version", strconv.FormatInt(v, 16), "servers", servers, "moved", moved, "err", err)
			version = v
		}
		select {
		case <-changed: // a change, or the watch ended with its session
		case <-ctx.Done():
			return
		}
		// A follower may lag: the read after a change sees at least it.
		if err := c.Sync(ctx, "/"); err != nil && ctx.Err() == nil {
			c.log.Debug("zkit: sync before reading the ensemble's configuration", "err", err)
		}
	}
}

// clientServers reads a dynamic configuration, as ConfigNode holds it:
// the client address ("host:port") of every server that has one, and the
// configuration's version (0 if it has none).
//
//	server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181
//	server.2=10.0.0.2:2888:3888:observer;10.0.0.2:2181
//	version=100000003
func clientServers(config []byte) (servers []string, version int64) {
	for _, line := range strings.Split(string(config), "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok:
		case key == "version":
			version, _ = strconv.ParseInt(value, 16, 64)
		case strings.HasPrefix(key, "server."):
			if addr := clientAddress(value); addr != "" {
				servers = append(servers, addr)
			}
		}
	}
	return servers, version
}

// clientAddress is the client address of a server line's value
// ("HOST:QUORUM:ELECTION[:ROLE];[CLIENT_HOST:]CLIENT_PORT"), "" when it
// names none: its client host, or its quorum host where the client host
// is missing or a wildcard.
func clientAddress(value string) string {
	quorum, client, ok := strings.Cut(value, ";")
	if !ok {
		return ""
	}
	host, port := "", strings.TrimSpace(client)
	if i := strings.LastIndexByte(port, ':'); i >= 0 {
		host, port = port[:i], port[i+1:]
	}
	host = strings.Trim(host, "[]")
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		host = quorumHost(quorum)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 || host == "" {
		return ""
	}
	return net.JoinHostPort(host, port)
}

// quorumHost is the host of a server line's quorum address
// ("HOST:PORT:PORT[:ROLE]", an IPv6 address in brackets).
func quorumHost(quorum string) string {
	if rest, ok := strings.CutPrefix(quorum, "["); ok {
		host, _, _ := strings.Cut(rest, "]")
		return host
	}
	host, _, _ := strings.Cut(quorum, ":")
	return host
}
