package client

import (
	"log/slog"
	"net"
	"time"
)

// Dialer opens the TCP connection to one server. It has the signature of
// go-zookeeper's Dialer, so zktest's fault proxies and in-process servers plug
// straight in.
type Dialer func(network, address string, timeout time.Duration) (net.Conn, error)

// Option configures Connect.
type Option func(*config)

type config struct {
	sessionTimeout time.Duration
	logger         *slog.Logger
	auth           []authCred
	dialer         Dialer
	maxBuffer      int
	defaultACL     []ACL
}

type authCred struct {
	scheme string
	auth   []byte
}

// DefaultSessionTimeout is the session timeout asked for when none is given.
// The server clamps it to [2, 20] × its tickTime.
const DefaultSessionTimeout = 10 * time.Second

func defaultConfig() config {
	return config{
		sessionTimeout: DefaultSessionTimeout,
		logger:         slog.New(slog.DiscardHandler),
		dialer:         net.DialTimeout,
		maxBuffer:      DefaultMaxBuffer,
		defaultACL:     OpenACL,
	}
}

// WithSessionTimeout sets the session timeout to ask the server for. The
// server may negotiate another; Session.Timeout reports the one in force.
func WithSessionTimeout(d time.Duration) Option {
	return func(c *config) { c.sessionTimeout = d }
}

// WithLogger routes the client's log lines, and go-zookeeper's own, to l.
// By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithDigestAuth authenticates every connection of the session with the
// digest scheme ("user:password"), as zkCli's addauth digest does.
func WithDigestAuth(user, password string) Option {
	return WithAuth("digest", []byte(user+":"+password))
}

// WithAuth adds credentials for scheme, sent on every (re)connection.
func WithAuth(scheme string, auth []byte) Option {
	return func(c *config) { c.auth = append(c.auth, authCred{scheme, auth}) }
}

// WithDialer replaces net.DialTimeout for opening connections.
func WithDialer(d Dialer) Option {
	return func(c *config) {
		if d != nil {
			c.dialer = d
		}
	}
}

// WithMaxBuffer sets the server's request size limit, its jute.maxbuffer
// (default DefaultMaxBuffer). A request whose data would exceed it is refused
// with an *InputError before anything is sent.
func WithMaxBuffer(n int) Option {
	return func(c *config) { c.maxBuffer = n }
}

// WithDefaultACL sets the ACL used by creates that name none (default
// OpenACL: world:anyone with every permission).
func WithDefaultACL(acl ...ACL) Option {
	return func(c *config) { c.defaultACL = acl }
}
