package client_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/logtest"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A protected create whose reply is cut leaves exactly one node, owned by
// the session, and returns its path.
func TestCreateProtectedLostReply(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		proxy.CutAfterNextRequest()
		p, err := c.CreateProtected(ctx, base+"/lock-", []byte("me"), client.EphemeralSequential)
		require.NoError(t, err)

		children, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		require.Len(t, children, 1, "exactly one node: %v", children)
		assert.Equal(t, base+"/"+children[0], p)
		id, rest, ok := client.ParseProtected(children[0])
		require.True(t, ok, children[0])
		assert.Len(t, id, 36)
		assert.True(t, strings.HasPrefix(rest, "lock-"), rest)
		_, st, err := c.Exists(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, c.Session().ID(), st.EphemeralOwner)
	})
}

// The same cut against go-zookeeper's own CreateProtectedEphemeralSequential
// shows why zkit has its own: its names are not in Curator's format (a
// Curator peer does not see them as protected), and its search after the
// lost reply slices every "_c_" name blindly, so a short foreign "_c_" node
// listed before its own makes it panic, stranding the node it created
// (and when it lists before the connection is back, it gives up with an
// error, stranding the node all the same).
func TestGoZookeeperProtectedCreateFallsShort(t *testing.T) {
	t.Parallel()
	zkSrv := zktest.SharedZooKeeper(t)
	proxy := zktest.NewProxy(t, zkSrv.Servers()[0])
	ctx := testCtx(t)
	base := zktest.UniquePath(t)
	admin := connect(t, zkSrv.Servers())
	require.NoError(t, admin.EnsurePath(ctx, base))
	foreign := map[string]bool{}
	for _, n := range []string{"_c_a", "_c_b", "_c_c", "_c_d", "_c_e", "_c_f", "_c_g", "_c_h"} {
		_, err := admin.Create(ctx, base+"/"+n, nil, client.Persistent) // another tool's nodes
		require.NoError(t, err)
		foreign[n] = true
	}

	conn, _, err := zk.Connect([]string{proxy.Addr()}, zktest.Scale(10*time.Second), zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	require.NoError(t, err)
	defer conn.Close()
	_, _, err = conn.Exists("/") // waits for the session
	require.NoError(t, err)

	proxy.CutAfterNextRequest()
	var got string
	var createErr error
	panicked := func() (p any) {
		defer func() { p = recover() }()
		got, createErr = conn.CreateProtectedEphemeralSequential(base+"/lock-", nil, zk.WorldACL(zk.PermAll))
		return nil
	}()

	// The server lists children in the same order for the same set, so this
	// is the order go-zookeeper searched in.
	children, _, err := admin.Children(ctx, base)
	require.NoError(t, err)
	created, foreignFirst := "", false
	for _, ch := range children {
		if foreign[ch] {
			foreignFirst = foreignFirst || created == ""
			continue
		}
		require.Empty(t, created, "one node only: %v", children)
		created = ch
	}
	require.NotEmpty(t, created, "the create was applied: %v", children)
	_, _, ok := client.ParseProtected(created)
	assert.False(t, ok, "go-zookeeper's name %q is not in Curator's protected format", created)
	switch {
	case panicked == nil && createErr != nil:
		// Its listing after the cut came while the connection was still
		// down: it gave up without searching, stranding its node all the
		// same (zkit's waits for the connection and searches).
		t.Logf("go-zookeeper failed (%v) and stranded %s", createErr, created)
	case foreignFirst:
		assert.NotNil(t, panicked, "a short _c_ node listed first makes go-zookeeper's search panic")
		t.Logf("go-zookeeper panicked (%v) and stranded %s", panicked, created)
	default:
		assert.Nil(t, panicked)
		assert.Equal(t, base+"/"+created, got)
	}

	// zkit's CreateProtected in the same directory, with the same cut: fine.
	c := connect(t, []string{proxy.Addr()})
	proxy.CutAfterNextRequest()
	p, err := c.CreateProtected(ctx, base+"/lock-", nil, client.EphemeralSequential)
	require.NoError(t, err)
	_, _, ok = client.ParseProtected(strings.TrimPrefix(p, base+"/"))
	assert.True(t, ok)
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// createdWith is a protected create that returns the czxid, and maybe a
// listing (listed says whether it is meant to).
type createdWith struct {
	name   string
	listed bool
	create func(context.Context, *client.Client, string) (string, int64, *client.Listing, error)
}

var protectedZxidCreates = []createdWith{
	{"CreateProtectedZxid", false, func(ctx context.Context, c *client.Client, path string) (string, int64, *client.Listing, error) {
		p, czxid, err := c.CreateProtectedZxid(ctx, path, nil, client.EphemeralSequential)
		return p, czxid, nil, err
	}},
	{"CreateProtectedListed", true, func(ctx context.Context, c *client.Client, path string) (string, int64, *client.Listing, error) {
		return c.CreateProtectedListed(ctx, path, nil, client.EphemeralSequential)
	}},
}

// The czxid of CreateProtectedZxid and CreateProtectedListed is the node's,
// whether it came from the create's reply or from the look-up after a lost
// one; concurrent creates of other clients do not confuse it.
// CreateProtectedListed's listing is taken after the create: it always
// holds the new node and every node created before it (here, the client's
// own earlier nodes). After a lost reply there is no listing.
func TestCreateProtectedZxid(t *testing.T) {
	t.Parallel()
	for _, cw := range protectedZxidCreates {
		t.Run(cw.name, func(t *testing.T) { testCreateProtectedZxid(t, cw) })
	}
}

func testCreateProtectedZxid(t *testing.T, cw createdWith) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		admin := b.Connect(t)
		require.NoError(t, admin.EnsurePath(ctx, base))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				c := b.Connect(t)
				var mine []string
				for range 50 {
					p, czxid, listing, err := cw.create(ctx, c, base+"/n-")
					if !assert.NoError(t, err) {
						return
					}
					_, name := client.SplitPath(p)
					mine = append(mine, name)
					if cw.listed && !(assert.NotNil(t, listing, "client %d: no listing", g) &&
						assert.Subset(t, listing.Children, mine, "client %d: the listing after creating %s", g, name) &&
						assert.Equal(t, int(listing.Stat.NumChildren), len(listing.Children), "client %d: the parent's Stat is the listing's", g)) {
						return
					}
					_, st, err := c.Exists(ctx, p)
					if !assert.NoError(t, err) {
						return
					}
					assert.Equal(t, st.Czxid, czxid, "client %d, %s", g, p)
				}
			})
		}
		wg.Wait()

		c := b.Connect(t, b.CutNextCreate(t, base)...)
		p, czxid, listing, err := cw.create(ctx, c, base+"/cut-")
		require.NoError(t, err)
		assert.Nil(t, listing, "no listing after a lost reply")
		_, st, err := c.Exists(ctx, p)
		require.NoError(t, err)
		require.Equal(t, st.Czxid, czxid, "after a lost reply")

		before, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		_, _, _, err = cw.create(ctx, c, base+"/bad\x00")
		var ie *client.InputError
		require.ErrorAs(t, err, &ie)
		after, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		assert.ElementsMatch(t, before, after, "nothing created for bad input")
	})
}

// A protected create whose context ends while its request is on its way
// gives up with the context's error, and deletes in the background the
// node that the request, applied after, left.
func TestCreateProtectedGivenUpCleansUp(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		proxy := zktest.NewProxy(t, b.Addr())
		c := connect(t, []string{proxy.Addr()})
		observer := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))

		latency := zktest.Scale(300 * time.Millisecond)
		proxy.SetLatency(latency)
		short, cancel := context.WithTimeout(ctx, latency/3)
		_, err := c.CreateProtected(short, base+"/node", []byte("x"), client.Persistent)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		proxy.SetLatency(0)
		// Answered in order on the same connection: the create written
		// before it has been applied by now.
		require.NoError(t, c.Sync(ctx, base))

		eventually(t, 20*time.Second, "the node left by the create given up to be deleted", func() bool {
			require.NoError(t, observer.Sync(ctx, base))
			children, _, err := observer.Children(ctx, base)
			require.NoError(t, err)
			return len(children) == 0
		})
	})
}

// An ephemeral protected create fails with ErrSessionLost when the session
// that would own its node is lost while it waits for the connection: it
// does not go on to create the node under the next session.
func TestCreateProtectedEndsWithItsSession(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		p := newProxied(t, b, zktest.Scale(time.Second))
		ctx := testCtx(t)
		p.partition(t)
		errc := make(chan error, 1)
		go func() {
			_, err := p.c.CreateProtected(ctx, p.base+"/lock-", nil, client.EphemeralSequential)
			errc <- err
		}()
		select {
		case <-p.sess.Done():
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("the session was not declared lost")
		}
		p.proxy.Heal()
		select {
		case err := <-errc:
			require.ErrorIs(t, err, client.ErrSessionLost)
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("CreateProtected did not return after its session was lost")
		}
		children, _, err := p.observer.Children(ctx, p.base)
		require.NoError(t, err)
		for _, ch := range children {
			_, _, protected := client.ParseProtected(ch)
			assert.False(t, protected, "a node was created: %s", ch)
		}
	})
}

// A protected create that gives up after a lost reply leaves its cleanup
// to the background; when the cleanup fails with an error that trying
// again cannot cure, it stops at once with one warning that names the
// parent and the protection id (so that an operator can find the node and
// delete it by hand), instead of trying again every few seconds for as
// long as the client lives.
func TestCreateProtectedCleanupGivesUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		want error
		// setup fills dir so that its cleanup fails with want for a
		// client opened with opts; admin still reads dir.
		setup func(t *testing.T, ctx context.Context, admin *client.Client, dir string) (opts []client.Option)
	}{
		{"ReplyTooLarge", client.ErrReplyTooLarge, func(t *testing.T, ctx context.Context, admin *client.Client, dir string) []client.Option {
			fillChildren(t, ctx, admin, dir, 4096+64<<10)
			return []client.Option{client.WithMaxBuffer(4096)}
		}},
		{"NoAuth", client.ErrNoAuth, func(t *testing.T, ctx context.Context, admin *client.Client, dir string) []client.Option {
			// Anyone may create in dir, but only admin may list it.
			acl := append(client.WorldACL(client.PermCreate), client.DigestACL(client.PermAll, "admin", "secret")...)
			_, err := admin.SetACL(ctx, dir, acl, -1)
			require.NoError(t, err)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				ctx := testCtx(t)
				admin := b.Connect(t, client.WithDigestAuth("admin", "secret"))
				dir := zktest.UniquePath(t)
				require.NoError(t, admin.EnsurePath(ctx, dir))
				opts := tc.setup(t, ctx, admin, dir)
				logs := &logtest.Recorder{}
				reader := sdkmetric.NewManualReader()
				opts = append(opts, client.WithLogger(slog.New(logs)),
					client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
				c := b.Connect(t, append(b.CutNextCreate(t, dir), opts...)...)

				// The create is applied, its reply lost, and the look-up
				// for its node fails with want: the create gives up.
				_, err := c.CreateProtected(ctx, dir+"/node-", nil, client.Persistent)
				require.ErrorIs(t, err, tc.want)
				children, _, err := admin.Children(ctx, dir)
				require.NoError(t, err)
				var id string
				for _, ch := range children {
					if cid, _, ok := client.ParseProtected(ch); ok {
						require.Empty(t, id, "one protected node: %v", ch)
						id = cid
					}
				}
				require.NotEmpty(t, id, "the create was applied")

				var warned []slog.Record
				eventually(t, 10*time.Second, "the cleanup's warning", func() bool {
					warned = logs.At(slog.LevelWarn, "protected")
					return len(warned) > 0
				})
				calls := requestCount(t, reader)
				// The cleanup tried again 50ms after a failure: it would
				// have made several calls by the end of this.
				time.Sleep(zktest.Scale(time.Second))
				assert.Equal(t, calls, requestCount(t, reader), "the cleanup went on after its warning")
				warned = logs.At(slog.LevelWarn, "protected")
				require.Len(t, warned, 1, "one warning")
				a := logtest.Attrs(warned[0])
				assert.Equal(t, dir, a["parent"].String())
				assert.Equal(t, id, a["id"].String())
				err, _ = a["err"].Any().(error)
				assert.ErrorIs(t, err, tc.want)
			})
		})
	}
}

// requestCount returns the number of calls the client's telemetry counted.
func requestCount(t *testing.T, reader *sdkmetric.ManualReader) uint64 {
	t.Helper()
	var n uint64
	for _, c := range collect(t, reader).requests {
		n += c
	}
	return n
}

// The background cleanup of a protected create given up tries again
// through a disconnect: it gives up only on errors that trying again
// cannot cure.
func TestCreateProtectedCleanupRidesOutDisconnects(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		logs := &logtest.Recorder{}
		reader := sdkmetric.NewManualReader()
		c := connect(t, []string{proxy.Addr()}, client.WithLogger(slog.New(logs)),
			client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		dir := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, dir))
		sub := c.Subscribe()
		defer sub.Close()
		proxy.Blackhole()
		proxy.ResetAll()
		require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)

		short, cancel := context.WithTimeout(ctx, zktest.Scale(100*time.Millisecond))
		_, err := c.CreateProtected(short, dir+"/node-", nil, client.Persistent)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		eventually(t, 10*time.Second, "the cleanup to try again", func() bool {
			return len(logs.At(slog.LevelDebug, "protected cleanup will retry")) > 0
		})
		listed := func() uint64 { return collect(t, reader).requests[[2]string{"children", "ok"}] }
		before := listed()
		proxy.Heal()
		eventually(t, 20*time.Second, "the cleanup to list the parent once connected", func() bool { return listed() > before })
		assert.Empty(t, logs.At(slog.LevelWarn, "protected"), "the cleanup gave up")
	})
}

// A persistent protected create waiting for the connection goes on
// pacing its look-ups once its session is lost: the node would outlive the
// session, so the create waits on (within its context) for the next one.
func TestCreateProtectedPacedAfterSessionLoss(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		proxy := zktest.NewProxy(t, b.Addr())
		reader := sdkmetric.NewManualReader()
		c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(zktest.Scale(time.Second)),
			client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		dir := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, dir))
		sess := c.Session()
		sub := c.Subscribe()
		defer sub.Close()
		proxy.Blackhole()
		proxy.ResetAll()
		require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)

		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			_, err := c.CreateProtected(cctx, dir+"/node-", nil, client.Persistent)
			errc <- err
		}()
		select {
		case <-sess.Done():
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("the session was not declared lost")
		}
		before := requestCount(t, reader)
		// Look-ups back off up to a second apart: a few at most in this.
		time.Sleep(zktest.Scale(time.Second))
		calls := requestCount(t, reader) - before
		cancel()
		select {
		case err := <-errc:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("CreateProtected did not return when its context ended")
		}
		assert.Less(t, calls, uint64(10), "calls in the second after the session was lost")
	})
}

// An ephemeral protected create whose reply is lost, and whose session the
// client gives up before it can look the node up while the server keeps
// it (a leader election or restart resets its timer), fails with an error
// matching both ErrSessionLost and ErrOutcomeUnknown, and deletes its
// node under the next session, as recipes.Remove does: the node does not
// linger, for others to see and act on, until the server expires the
// session.
func TestCreateProtectedSessionGivenUpCleansUp(t *testing.T) {
	t.Parallel()
	b := zktest.ReferenceBackend(t)
	ctx := testCtx(t)
	timeout := zktest.Scale(4 * time.Second)
	proxy := zktest.NewProxy(t, b.Addr())
	var dials atomic.Int32
	var refuse atomic.Bool
	dial := proxy.Dialer()
	c := connect(t, []string{proxy.Addr()}, client.WithSessionTimeout(timeout), client.WithDialer(func(network, addr string, d time.Duration) (net.Conn, error) {
		if dials.Add(1) > 1 && refuse.Load() {
			return nil, errors.New("refused by the test")
		}
		return dial(network, addr, d)
	}))
	observer := connect(t, b.Servers)
	base := zktest.UniquePath(t)
	require.NoError(t, observer.EnsurePath(ctx, base))

	refuse.Store(true) // the cut connection cannot come back
	proxy.CutAfterNextCreate(base + "/")
	errc := make(chan error, 1)
	go func() {
		_, err := c.CreateProtected(ctx, base+"/n-", nil, client.EphemeralSequential)
		errc <- err
	}()
	eventually(t, 20*time.Second, "the create to be applied", func() bool {
		children, _, err := observer.Children(ctx, base)
		require.NoError(t, err)
		return len(children) == 1
	})
	recipetest.GiveUpSession(t, b.Reference(), proxy, c, timeout)
	expiry := time.Now().Add(timeout / 2) // at the earliest, on the server
	proxy.Heal()
	refuse.Store(false)
	select {
	case err := <-errc:
		require.ErrorIs(t, err, client.ErrSessionLost)
		require.ErrorIs(t, err, client.ErrOutcomeUnknown)
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("CreateProtected did not return after its session was given up")
	}
	for {
		err := observer.Sync(ctx, base) // the observer too reconnects after the restarts
		var children []string
		if err == nil {
			children, _, err = observer.Children(ctx, base)
		}
		if !client.IsRetryable(err) {
			require.NoError(t, err)
			if len(children) == 0 {
				return
			}
		}
		if time.Now().After(expiry) {
			t.Fatalf("%v still there, for the server to expire with the session the client gave up", children)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
