package client_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A protected create whose reply is cut leaves exactly one node, owned by
// the session, and returns its path.
func TestCreateProtectedLostReply(t *testing.T) {
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

// CreateProtectedZxid's czxid is the node's, whether it came from the
// create's reply or from the look-up after a lost one; concurrent creates
// of other clients do not confuse it.
func TestCreateProtectedZxid(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		admin := b.Connect(t)
		require.NoError(t, admin.EnsurePath(ctx, base))
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := b.Connect(t)
				for range 50 {
					p, czxid, err := c.CreateProtectedZxid(ctx, base+"/n-", nil, client.EphemeralSequential)
					if !assert.NoError(t, err) {
						return
					}
					_, st, err := c.Exists(ctx, p)
					if !assert.NoError(t, err) {
						return
					}
					assert.Equal(t, st.Czxid, czxid, "client %d, %s", g, p)
				}
			}()
		}
		wg.Wait()

		c := b.Connect(t, b.CutNextCreate(t, base)...)
		p, czxid, err := c.CreateProtectedZxid(ctx, base+"/cut-", nil, client.EphemeralSequential)
		require.NoError(t, err)
		_, st, err := c.Exists(ctx, p)
		require.NoError(t, err)
		require.Equal(t, st.Czxid, czxid, "after a lost reply")
	})
}
