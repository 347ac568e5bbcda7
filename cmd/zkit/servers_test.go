package main

import (
	"slices"
	"strings"
	"testing"
)

// A server named without a port is at 2181, as ZooKeeper's clients take
// it; an IPv6 address goes in brackets, with or without a port.
func TestServersDefaultPort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"127.0.0.1":                {"127.0.0.1:2181"},
		"zk1,zk2:2182, zk3/app":    {"zk1:2181", "zk2:2182", "zk3:2181"},
		"[::1]":                    {"[::1]:2181"},
		"[::1]:2182,[fe80::1]/app": {"[::1]:2182", "[fe80::1]:2181"},
	} {
		a := &app{servers: in}
		if got, err := a.serverList(); err != nil || !slices.Equal(got, want) {
			t.Errorf("--servers %q: %q, %v; want %q", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"::1":          "an IPv6 address goes in brackets, [::1] or [::1]:2181",
		"[::1":         "is not host:port",
		"[]":           "is not host:port",
		"zk1:":         "port \"\" of zk1: is not 1 to 65535",
		"zk1:0":        "port \"0\" of zk1:0 is not 1 to 65535",
		"[::1]:x":      "is not 1 to 65535",
		"zk1:2181:218": "an IPv6 address goes in brackets",
	} {
		a := &app{servers: in}
		if _, err := a.serverList(); statusOf(err) != exitUsage || !strings.Contains(err.Error(), says) {
			t.Errorf("--servers %q: %v; want a usage error saying %q", in, err, says)
		}
	}
}

// zkit connects to a server named without a port at 2181: whether
// something answers there or not, it is that address it tried.
func TestServersWithoutPortConnectTo2181(t *testing.T) {
	t.Parallel()
	for _, servers := range []string{"127.0.0.1", "[::1]"} {
		r := zkit(t, "stat", "/", "--servers", servers, "--connect-timeout", "300ms")
		switch {
		case r.status == exitUnreachable:
			oneErrorLine(t, r, "no ZooKeeper reachable at "+servers+":2181 within")
		case r.status != exitOK:
			t.Errorf("--servers %s: status %d (%q), want it to try %s:2181", servers, r.status, r.stderr, servers)
		}
	}
}
