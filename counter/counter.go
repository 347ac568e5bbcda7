package counter

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"github.com/zkit-dev/zkit/recipes"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Counter is a 64-bit integer counter stored in the data of one znode. It is
// safe for concurrent use; see the package documentation for how calls
// are combined and what they guarantee.
type Counter struct {
	c    *client.Client
	path string
	cfg  config
}

// New returns the counter at path. It does no I/O; the path is checked by
// every call.
func New(c *client.Client, path string, opts ...Option) *Counter {
	cfg := recipes.Apply(opts)
	return &Counter{c: c, path: path, cfg: cfg}
}

// Path is the counter's node.
func (k *Counter) Path() string { return k.path }

// Encoding is how the counter stores its value.
func (k *Counter) Encoding() Encoding { return k.cfg.enc }

// Get returns the counter's value: 0 while its node does not exist. The
// value is read after a sync (or taken from a write made meanwhile by a
// concurrent call of this client), so it is no older than any change that
// completed before Get was called.
func (k *Counter) Get(ctx context.Context) (int64, error) {
	r := k.do(ctx, &call{kind: opGet})
	return r.value, r.err
}

// Add adds delta to the counter and returns the value right after this
// caller's own delta was added. Concurrent callers each get a distinct
// result (for non-zero deltas). If the node does not exist, Add creates it
// (and any missing parent) holding delta, as Curator's
// DistributedAtomicLong does; two clients creating it at once both count.
//
// A result that would not fit the encoding is refused with an
// *OverflowError; the counter does not wrap. Data that does not decode is
// a *DataError. In both cases nothing is written.
//
// If the write's reply is lost (connection loss, or ctx ending while it is
// in flight), Add reads the node back and retries only when it can tell
// that the write was not applied; otherwise it returns an error matching
// client.ErrOutcomeUnknown: the delta was added once or not at all, never
// twice. Do not simply call Add again for such an error if double
// counting matters.
func (k *Counter) Add(ctx context.Context, delta int64) (int64, error) {
	r := k.do(ctx, &call{kind: opAdd, a: delta})
	return r.value, r.err
}

// Set stores value, creating the node (and any missing parent) if needed.
// Like Add, it refuses to replace data that does not decode (a
// *DataError), and fails like Add when the outcome of its write is
// unknown.
func (k *Counter) Set(ctx context.Context, value int64) error {
	if !k.cfg.enc.fits(value) {
		return k.inputError("set", fmt.Sprintf("value %d does not fit the %s encoding", value, k.cfg.enc))
	}
	return k.do(ctx, &call{kind: opSet, a: value}).err
}

// CompareAndSet stores new if the counter holds old (a missing node holds
// 0), and reports whether it did. It fails like Add when the outcome of its
// write is unknown. A false result is decided on a value read during the
// call.
func (k *Counter) CompareAndSet(ctx context.Context, old, new int64) (bool, error) {
	for _, v := range []int64{old, new} {
		if !k.cfg.enc.fits(v) {
			return false, k.inputError("compareAndSet", fmt.Sprintf("value %d does not fit the %s encoding", v, k.cfg.enc))
		}
	}
	r := k.do(ctx, &call{kind: opCAS, a: old, b: new})
	return r.swapped, r.err
}

func (k *Counter) do(ctx context.Context, cl *call) result {
	op := "counter " + opNames[cl.kind]
	if err := recipes.CheckDir(op, k.path, "counter"); err != nil {
		return result{err: err}
	}
	if !k.cfg.enc.valid() {
		return result{err: k.inputError(opNames[cl.kind], fmt.Sprintf("unknown encoding %d", int(k.cfg.enc)))}
	}
	if k.cfg.aclSet && len(k.cfg.ACL) == 0 {
		return result{err: k.inputError(opNames[cl.kind], "empty ACL")}
	}
	if err := k.c.Context().Err(); err != nil {
		return result{err: fmt.Errorf("zkit: %s %q: %w", op, k.path, client.ErrClosed)}
	}
	cl.create, cl.log = k.cfg.CreateOptions(), k.cfg.Log()
	ctx, span := recipekit.InstrumentsOf(k.c).Start(ctx, "counter", opNames[cl.kind], k.path)
	defer span.End()
	r := engineFor(k.c, k.path, k.cfg.enc).do(ctx, cl)
	r.err = recipes.Wrap(op, k.path, r.err)
	if r.err != nil {
		span.SetStatus(codes.Error, r.err.Error())
	} else {
		// Combined with other calls of this client into one write, which
		// was retried after each write another writer got in first; and
		// which write that was (for a get, which state of the node it
		// read): its zxid and the node's version, where known.
		attrs := []attribute.KeyValue{
			attribute.Int("zkit.counter.combined", cl.combined),
			attribute.Int("zkit.counter.retries", cl.conflicts),
			attribute.Int64("zkit.counter.value", r.value),
		}
		if r.zxid != 0 {
			attrs = append(attrs, attribute.Int64("zkit.counter.zxid", r.zxid))
		}
		if r.zxid != 0 && r.version >= 0 {
			attrs = append(attrs, attribute.Int64("zkit.counter.version", int64(r.version)))
		}
		span.AddEvent("applied", trace.WithAttributes(attrs...))
	}
	return r
}

func (k *Counter) inputError(op, reason string) error {
	return &client.InputError{Op: "counter " + op, Path: k.path, Reason: reason}
}

// Option configures a Counter.
type Option func(*config)

type config struct {
	recipes.Options
	enc    Encoding
	aclSet bool
}

// WithEncoding sets how the value is stored (default Long, Curator's
// DistributedAtomicLong layout). Every client of one counter must use the
// same encoding.
func WithEncoding(e Encoding) Option { return func(c *config) { c.enc = e } }

// WithACL gives the nodes Add, Set and CompareAndSet create acl instead
// of the client's default ACL: the counter's node and the missing parents
// created on the way to it, as a lock gives its ACL to the directories it
// creates. A parent created with acl must let the counter be created in it
// (client.PermCreate): with an acl without it, create the parents first.
// Nodes that exist keep their ACL.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL, c.aclSet = acl, true }
}

// WithLogger routes the counter's log lines (write conflicts at debug
// level, outcome-unknown writes at warn level) to l. By default nothing is
// logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}
