package refserver

import (
	"crypto/tls"
	"io"
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Config holds the server's settings. The zero value of every field means
// ZooKeeper's default.
type Config struct {
	// TickTime is ZooKeeper's tickTime (default 2s): the unit of session
	// timeouts and of session expiry buckets.
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout bound negotiated session
	// timeouts (defaults 2 and 20 ticks).
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxBuffer is jute.maxbuffer: the largest frame accepted (default
	// 0xfffff bytes). A larger frame closes the connection.
	MaxBuffer int
	// MaxClientCnxns is ZooKeeper's maxClientCnxns: how many connections
	// one IP address may have open at once (default 60, as ZooKeeper's).
	// A connection over the limit is closed as soon as it is accepted,
	// unanswered. Negative means no limit (ZooKeeper's 0).
	MaxClientCnxns int
	// DisableExtendedTypes makes createTTL fail with Unimplemented, as a
	// ZooKeeper started without zookeeper.extendedTypesEnabled=true does.
	// TTL nodes are enabled by default.
	DisableExtendedTypes bool
	// DisableContainers makes createContainer an unknown request, as it is
	// to ZooKeeper before 3.5: the reply is Unimplemented, and the
	// connection is closed (the session lives on). Containers are enabled
	// by default.
	DisableContainers bool
	// DisablePersistentWatches makes addWatch and setWatches2 unknown
	// requests, as they are to ZooKeeper before 3.6: the reply is
	// Unimplemented, and the connection is closed (the session lives on).
	// Persistent watches are enabled by default.
	DisablePersistentWatches bool
	// WatchEventZxids sends, in the reply header of a watch event, the
	// zxid of the transaction that fired it, as ZooKeeper 3.9 and later
	// do. By default the header carries -1 there, as ZooKeeper 3.8's does.
	// An event fired when a reconnecting client sets its watches again
	// carries -1 either way.
	WatchEventZxids bool
	// ContainerCheckInterval is how often empty containers and expired TTL
	// nodes are reaped, measured on the server's clock (default 60s, as
	// znode.container.checkIntervalMs). FastForward also runs a pass.
	ContainerCheckInterval time.Duration
	// ReconfigEnabled answers reconfig as a standalone ZooKeeper with
	// reconfigEnabled=true does: Unimplemented, since a standalone
	// server's membership cannot change. By default it answers
	// ReconfigDisabled, as ZooKeeper does by default.
	ReconfigEnabled bool
	// SuperDigest, if set ("super:<base64 sha1>", as
	// zookeeper.DigestAuthenticationProvider.superDigest), gives clients
	// that authenticate with the matching digest every permission.
	SuperDigest string
	// TLS, if set, makes the server listen with TLS only. Clients that
	// present a certificate verified by TLS.ClientCAs (TLS.ClientAuth
	// VerifyClientCertIfGiven or stricter) are authenticated by the x509
	// scheme as the certificate's subject (RFC 2253).
	TLS *tls.Config
	// Logger receives the server's logs (default: discarded).
	Logger *slog.Logger
	// Now, if set, replaces time.Now as the base of the server's clock.
	Now func() time.Time

	// outputLimit and outputFrames bound a connection's queued output
	// before its requests stop being read (defaults maxOutputBytes and
	// maxOutputFrames); tests lower them.
	outputLimit  int64
	outputFrames int
}

// A connection whose client does not read its replies stops being read
// once this much output waits for it (bytes, frames); its client's writes
// then block. maxOutputBytes is a few of the largest replies.
const (
	maxOutputBytes  = 4 << 20
	maxOutputFrames = 1000
	// A connection whose queued output passes this many times
	// outputLimit all the same (watch events, which requests on other
	// connections trigger) is closed.
	outputDropFactor = 16
)

func (c Config) withDefaults() Config {
	if c.TickTime <= 0 {
		c.TickTime = 2 * time.Second
	}
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.MaxBuffer <= 0 {
		c.MaxBuffer = jute.DefaultMaxBuffer
	}
	if c.MaxClientCnxns == 0 {
		c.MaxClientCnxns = 60
	}
	if c.ContainerCheckInterval <= 0 {
		c.ContainerCheckInterval = time.Minute
	}
	if c.outputLimit <= 0 {
		c.outputLimit = maxOutputBytes
	}
	if c.outputFrames <= 0 {
		c.outputFrames = maxOutputFrames
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
