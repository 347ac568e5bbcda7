package main

import (
	"net"
	"strings"
	"testing"
)

// Every global flag has a ZKIT_ variable; the flag beats it, and a bad
// value is a usage error naming the variable.
func TestGlobalFlagsFromEnvironment(t *testing.T) {
	servers, _, _ := env(t)
	zkitOn(t, servers, exitOK, "counter", "/env", "set", "7")

	t.Setenv("ZKIT_OUTPUT", "json")
	if r := zkitOn(t, servers, exitOK, "counter", "/env", "get"); r.stdout != `{"path":"/env","value":7}`+"\n" {
		t.Fatalf("ZKIT_OUTPUT=json: printed %q", r.stdout)
	}
	if r := zkitOn(t, servers, exitOK, "counter", "/env", "get", "-o", "text"); r.stdout != "7\n" {
		t.Fatalf("-o text over ZKIT_OUTPUT=json: printed %q", r.stdout)
	}
	t.Setenv("ZKIT_OUTPUT", "")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("ZKIT_CONNECT_TIMEOUT", "300ms")
	t.Setenv("ZKIT_EXIT_BASE", "100")
	r := zkit(t, "get", "/x", "--servers", addr)
	if r.status != 100+exitUnreachable {
		t.Fatalf("status %d, want %d (%q)", r.status, 100+exitUnreachable, r.stderr)
	}
	oneErrorLine(t, r, "within 300ms")
	if r := zkit(t, "get", "/x", "--servers", addr, "--connect-timeout", "200ms", "--exit-base", "50"); r.status != 50+exitUnreachable || !strings.Contains(r.stderr, "within 200ms") {
		t.Fatalf("flags over ZKIT_CONNECT_TIMEOUT and ZKIT_EXIT_BASE: %+v", r)
	}
	if r := zkit(t, "frobnicate"); r.status != 100+exitUsage {
		t.Fatalf("ZKIT_EXIT_BASE on a usage error: status %d", r.status)
	}
	t.Setenv("ZKIT_EXIT_BASE", "")
	t.Setenv("ZKIT_CONNECT_TIMEOUT", "")

	for _, tc := range []struct{ name, value string }{
		{"ZKIT_SESSION_TIMEOUT", "soon"},
		{"ZKIT_SESSION_TIMEOUT", "0s"},
		{"ZKIT_CONNECT_TIMEOUT", "-1s"},
		{"ZKIT_KILL_AFTER", "-1s"},
		{"ZKIT_EXIT_BASE", "251"},
		{"ZKIT_EXIT_BASE", "x"},
		{"ZKIT_OUTPUT", "yaml"},
		{"ZKIT_TLS_CA", "/nonexistent/ca.pem"},
		{"ZKIT_SERVERS", "127.0.0.1:99999"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			r := zkit(t, "get", "/x")
			if r.status != exitUsage {
				t.Fatalf("status %d, want %d (%q)", r.status, exitUsage, r.stderr)
			}
			oneErrorLine(t, r, tc.name)
		})
	}
}
