package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// defaultServers is where zkit looks when neither --servers nor
// $ZKIT_SERVERS says.
const defaultServers = "127.0.0.1:2181"

// defaultPort is the port of a server named without one, as ZooKeeper's
// own clients assume it.
const defaultPort = "2181"

// connectString is --servers, else $ZKIT_SERVERS, else 127.0.0.1:2181,
// and which of them it is: host:port,...[/chroot], as ZooKeeper's own
// clients take it.
func (a *app) connectString() (s, from string) {
	s, from = a.servers, "--servers"
	if s == "" {
		s, from = os.Getenv("ZKIT_SERVERS"), "ZKIT_SERVERS"
	}
	if s == "" {
		s = defaultServers
	}
	return s, from
}

// splitChroot cuts a connect string into its servers and its chroot, the
// path that follows the last server ("/app" of "h1:2181,h2:2181/app").
func splitChroot(s string) (servers, chroot string) {
	if i := strings.Index(s, "/"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// chroot is the connect string's chroot, or --namespace, "" for none;
// zkit connects with it as the client's namespace.
func (a *app) chroot() (string, error) {
	s, from := a.connectString()
	_, root := splitChroot(s)
	if root == "/" {
		root = "" // the root itself: no chroot
	}
	if a.namespace != "" {
		if root != "" {
			return "", usagef("%s and %s %q both give a namespace: give it once", a.flagSource("namespace"), from, s)
		}
		root, from, s = a.namespace, a.flagSource("namespace"), a.namespace
	}
	if root == "" || root == "/" {
		return "", nil
	}
	if reason := client.ValidatePath(root, false); reason != "" {
		return "", usagef("%s %q: chroot %q: %s", from, s, root, reason)
	}
	return root, nil
}

// serverList is the ensemble to talk to: the servers of the connect
// string, without its chroot.
func (a *app) serverList() ([]string, error) {
	s, from := a.connectString()
	hosts, _ := splitChroot(s)
	var list []string
	for _, srv := range strings.Split(hosts, ",") {
		srv = strings.TrimSpace(srv)
		if srv == "" {
			continue
		}
		srv, err := withPort(srv)
		if err != nil {
			return nil, usagef("%s %q: %v", from, s, err)
		}
		list = append(list, srv)
	}
	if len(list) == 0 {
		return nil, usagef("%s %q names no server", from, s)
	}
	return list, nil
}

// withPort checks one server of a connect string, host:port or host alone
// (an IPv6 address in brackets: [::1]:2181, [::1]), and returns it with
// its port, 2181 when it names none.
func withPort(srv string) (string, error) {
	bracketed := strings.HasPrefix(srv, "[") && strings.HasSuffix(srv, "]")
	switch {
	case bracketed || !strings.Contains(srv, ":"):
		host := strings.TrimSuffix(strings.TrimPrefix(srv, "["), "]")
		srv = net.JoinHostPort(host, defaultPort)
	case strings.Count(srv, ":") > 1 && !strings.HasPrefix(srv, "["):
		return "", fmt.Errorf("%q: an IPv6 address goes in brackets, [%s] or [%s]:%s", srv, srv, srv, defaultPort)
	}
	host, port, err := net.SplitHostPort(srv)
	if err != nil || host == "" || strings.ContainsAny(host, "[]") {
		return "", fmt.Errorf("%q is not host:port", srv)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q of %s is not 1 to 65535", port, srv)
	}
	return srv, nil
}

// checkServers checks an explicit --servers before anything starts.
func (a *app) checkServers() error {
	if strings.TrimSpace(a.servers) == "" {
		return usagef("--servers is empty: name the servers, host[:port],...")
	}
	if _, err := a.serverList(); err != nil {
		return err
	}
	_, err := a.chroot()
	return err
}

// withWait bounds ctx by a command's --wait, when it is set (above 0):
// connecting counts towards it, as the wait for the recipe does.
func withWait(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if wait <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, wait)
}

// connect opens a client with the global flags, for a command that
// writes: it creates the namespace (--namespace, or the chroot of
// --servers) if it is missing. When no server answers within
// --connect-timeout it returns the unreachable error, with the fix.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	return a.open(ctx, toWrite)
}

// connectToRead is connect for a command that only reads what is there
// (ls, get, ... config get): it creates nothing, and fails, saying so,
// when the namespace is missing.
func (a *app) connectToRead(ctx context.Context) (*client.Client, error) {
	return a.open(ctx, toRead)
}

// connectToWait is connect for a command that only waits for nodes to
// appear (watch, elect --observe, members watch, discover watch, config
// watch, rendezvous wait): it creates nothing, and a missing namespace is
// only one more thing to wait for, as a missing node is.
func (a *app) connectToWait(ctx context.Context) (*client.Client, error) {
	return a.open(ctx, toWait)
}

// What a command connects to do, which decides what it does with a
// missing namespace: create it, fail, or wait for it.
const (
	toWrite = iota
	toRead
	toWait
)

func (a *app) open(ctx context.Context, purpose int) (*client.Client, error) {
	read := purpose == toRead
	servers, err := a.serverList()
	if err != nil {
		return nil, err
	}
	opts, err := a.clientOptions()
	if err != nil {
		return nil, err
	}
	switch purpose {
	case toRead:
		opts = append(opts, client.WithExistingNamespace())
	case toWait:
		opts = append(opts, client.WithNamespaceAsIs())
	}
	// A command's own deadline (--wait) may end the attempt before
	// --connect-timeout: the servers were unreachable all the same, for
	// as long as zkit waited.
	within := a.connectTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < within {
		within = max(time.Until(dl), 0).Round(time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(ctx, a.connectTimeout)
	defer cancel()
	c, err := client.Connect(cctx, servers, opts...)
	var untrusted *tls.CertificateVerificationError
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, context.DeadlineExceeded) && !errors.Is(ctx.Err(), context.Canceled):
		hint := ""
		if a.tlsOn() {
			hint = " (with TLS, the servers' secureClientPort)"
		}
		return nil, errorf(exitUnreachable,
			"no ZooKeeper reachable at %s within %v; pass --servers%s or set ZKIT_SERVERS, or start one with 'zkit serve'",
			strings.Join(servers, ","), within.Round(time.Millisecond), hint)
	case read && errors.Is(err, client.ErrNoNode):
		root, _ := a.chroot()
		return nil, failf("the namespace %s does not exist; commands that only read do not create it (one that writes does)", root)
	case errors.Is(err, client.ErrAuthFailed):
		return nil, authFailed(a.creds)
	case errors.As(err, &untrusted):
		by := "the system's CAs"
		if a.tlsCA != "" {
			by = "--tls-ca " + a.tlsCA
		}
		return nil, failf("the certificate of the server at %s is not trusted by %s (%v); pass --tls-ca with the CA that signed it",
			strings.Join(servers, ","), by, untrusted)
	}
	return nil, err
}

// clientOptions are the client options of the global flags.
func (a *app) clientOptions() ([]client.Option, error) {
	opts := []client.Option{client.WithSessionTimeout(a.sessionTimeout)}
	root, err := a.chroot()
	if err != nil {
		return nil, err
	}
	if root != "" {
		opts = append(opts, client.WithNamespace(root))
	}
	if l := a.logger(); l != nil {
		opts = append(opts, client.WithLogger(l))
	}
	for _, c := range a.creds {
		opts = append(opts, client.WithAuth(c.Scheme, c.Auth))
	}
	cfg, err := a.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, client.WithTLS(cfg))
	}
	return opts, nil
}

func (a *app) tlsOn() bool { return a.tlsCA != "" || a.tlsCert != "" || a.tlsKey != "" }

// tlsConfig is the TLS configuration of --tls-ca, --tls-cert and
// --tls-key; nil when none of them is given.
func (a *app) tlsConfig() (*tls.Config, error) {
	if !a.tlsOn() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.tlsCA != "" {
		pem, err := os.ReadFile(a.tlsCA)
		if err != nil {
			return nil, usagef("%s: %v", a.flagSource("tls-ca"), err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, usagef("%s %s holds no PEM certificate", a.flagSource("tls-ca"), a.tlsCA)
		}
	}
	switch {
	case a.tlsCert != "" && a.tlsKey != "":
		cert, err := tls.LoadX509KeyPair(a.tlsCert, a.tlsKey)
		if err != nil {
			return nil, usagef("%s %s, %s %s: %v", a.flagSource("tls-cert"), a.tlsCert, a.flagSource("tls-key"), a.tlsKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case a.tlsCert != "" || a.tlsKey != "":
		return nil, usagef("--tls-cert and --tls-key go together: a client certificate and its private key")
	}
	return cfg, nil
}

// withClient runs fn with a client of the global flags (a.connect), and
// closes it.
func (a *app) withClient(ctx context.Context, fn func(c *client.Client) error) error {
	return a.with(ctx, a.connect, fn)
}

// withReader is withClient for a command that only reads (a.connectToRead).
func (a *app) withReader(ctx context.Context, fn func(c *client.Client) error) error {
	return a.with(ctx, a.connectToRead, fn)
}

func (a *app) with(ctx context.Context, connect func(context.Context) (*client.Client, error), fn func(c *client.Client) error) error {
	c, err := connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}
