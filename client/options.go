package client

import (
	"crypto/tls"
	"log/slog"
	"net"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Dialer opens the TCP connection to one server within timeout
// (net.DialTimeout by default). zktest's fault proxies and in-process
// servers provide one.
type Dialer func(network, address string, timeout time.Duration) (net.Conn, error)

// Option configures Connect.
type Option func(*config)

type config struct {
	sessionTimeout time.Duration
	logger         *slog.Logger
	auth           []authCred
	dialer         Dialer
	tls            *tls.Config
	maxBuffer      int
	subBuffer      int // WithSubscriptionBuffer
	defaultACL     []ACL
	namespace      string
	nsMode         int // what Connect does with the namespace: nsCreate, nsCheck or nsAsIs
	meters         metric.MeterProvider
	tracers        trace.TracerProvider
	trackEnsemble  bool // WithEnsembleTracker
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
		subBuffer:      DefaultSubscriptionBuffer,
		defaultACL:     OpenACL,
	}
}

// WithSessionTimeout sets the session timeout to ask the server for. The
// server may negotiate another; Session.Timeout reports the one in force.
func WithSessionTimeout(d time.Duration) Option {
	return func(c *config) { c.sessionTimeout = d }
}

// WithLogger routes the client's log lines to l. By default nothing is
// logged.
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

// WithTLS makes every connection a TLS connection configured by cfg: for
// servers that listen on a secureClientPort (ZooKeeper 3.5+ with the Netty
// connection factory). cfg.RootCAs are the CAs trusted to sign the servers'
// certificates (nil: the system's); a certificate in cfg.Certificates is
// presented to servers that ask for one, and ZooKeeper's x509 provider then
// authenticates the client as the certificate's subject (see X509ACL). When
// cfg.ServerName is empty, each server's certificate is verified against
// the host in its address. A nil cfg means the defaults: the system's CAs,
// no client certificate.
//
// The TLS handshake runs on the connection WithDialer opens, so a fault
// proxy or an in-process server can sit under TLS. It is bounded like the
// wait for the server's connect response: a third of the session timeout,
// at least a second. Connect fails at once, without waiting for its context,
// when a server's certificate is not trusted, when a server does not speak
// TLS, or when a server refuses the client's certificate; after the first
// session the client keeps retrying through such errors (certificates may
// be rotated) and logs them.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) {
		if cfg == nil {
			cfg = &tls.Config{}
		}
		c.tls = cfg
	}
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
// with an *InputError before anything is sent. n must leave room for a
// request's own headers (more than 512 bytes): Connect refuses a smaller n
// with an *InputError.
//
// It also bounds the replies the client reads, to n + 64 KiB. ZooKeeper
// does not bound its replies: a node whose children's names add up to
// more answers Children (ChildrenW, a CreateListed's listing) with a longer
// reply, and so does Get for data written under a larger jute.maxbuffer
// than n. Such a call fails with a *ReplyTooLargeError naming the limit;
// the reply is skipped, and the connection and the session go on. A Multi
// whose reply could be longer is refused with an *InputError before it is
// sent. To read such a node, connect with a larger n: the server then drops the
// connection for a request over its own jute.maxbuffer instead of the
// client refusing it.
func WithMaxBuffer(n int) Option {
	return func(c *config) { c.maxBuffer = n }
}

// WithSubscriptionBuffer sets how many unread events each Subscription of
// the client holds (default DefaultSubscriptionBuffer): one more ends it
// with an error matching ErrSubscriptionOverflow. Connect refuses an n
// below 1 with an *InputError.
func WithSubscriptionBuffer(n int) Option {
	return func(c *config) { c.subBuffer = n }
}

// WithDefaultACL sets the ACL used by creates that name none (default
// OpenACL: world:anyone with every permission).
func WithDefaultACL(acl ...ACL) Option {
	return func(c *config) { c.defaultACL = acl }
}
