package main

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// defaultServers is where zkit looks when neither --servers nor
// $ZKIT_SERVERS says.
const defaultServers = "127.0.0.1:2181"

// serverList is the ensemble to talk to: --servers, else $ZKIT_SERVERS,
// else 127.0.0.1:2181.
func (a *app) serverList() ([]string, error) {
	s, from := a.servers, "--servers"
	if s == "" {
		s, from = os.Getenv("ZKIT_SERVERS"), "ZKIT_SERVERS"
	}
	if s == "" {
		s = defaultServers
	}
	var list []string
	for _, srv := range strings.Split(s, ",") {
		srv = strings.TrimSpace(srv)
		if srv == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(srv); err != nil {
			return nil, usagef("%s %q: %q is not host:port", from, s, srv)
		}
		list = append(list, srv)
	}
	if len(list) == 0 {
		return nil, usagef("%s %q names no server", from, s)
	}
	return list, nil
}

// connect opens a client with the global flags. When no server answers
// within --connect-timeout it returns the unreachable error, with the fix.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	servers, err := a.serverList()
	if err != nil {
		return nil, err
	}
	if a.sessionTimeout <= 0 {
		return nil, usagef("--session-timeout %v: must be positive", a.sessionTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, a.connectTimeout)
	defer cancel()
	c, err := client.Connect(cctx, servers, client.WithSessionTimeout(a.sessionTimeout))
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, errorf(exitUnreachable,
			"no ZooKeeper reachable at %s within %v; pass --servers or set ZKIT_SERVERS, or start one with 'zkit serve'",
			strings.Join(servers, ","), a.connectTimeout.Round(time.Millisecond))
	}
	return nil, err
}
