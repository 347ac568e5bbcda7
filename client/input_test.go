package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Bad paths, oversize data, bad versions and modes get typed errors before
// anything is sent, and the connection stays up.
func TestBadInputIsRejectedLocally(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := connect(t, b.Servers)
		ctx := testCtx(t)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		sess := c.Session()
		sub := c.Subscribe()
		defer sub.Close()

		calls := map[string]func() error{
			"relative path": func() error { _, err := c.Create(ctx, "a/b", nil, client.Persistent); return err },
			"empty name":    func() error { _, _, err := c.Get(ctx, base+"//x"); return err },
			"dot":           func() error { _, err := c.Set(ctx, base+"/./x", nil, -1); return err },
			"trailing /":    func() error { return c.Delete(ctx, base+"/", -1) },
			"nul":           func() error { _, _, err := c.Exists(ctx, base+"/a\x00"); return err },
			"oversize": func() error {
				_, err := c.Create(ctx, base+"/big", make([]byte, client.MaxData(base+"/big")+1), client.Persistent)
				return err
			},
			"oversize set": func() error { _, err := c.Set(ctx, base, make([]byte, 2<<20), -1); return err },
			"bad version":  func() error { return c.Delete(ctx, base, -5) },
			"bad mode":     func() error { _, err := c.Create(ctx, base+"/m", nil, client.CreateMode(42)); return err },
			"ttl missing":  func() error { _, err := c.Create(ctx, base+"/t", nil, client.PersistentTTL); return err },
			"ttl on plain": func() error {
				_, err := c.Create(ctx, base+"/t", nil, client.Persistent, client.WithTTL(time.Second))
				return err
			},
			"multi bad op":  func() error { _, err := c.Multi(ctx, client.CheckOp("nope", -1)); return err },
			"multi bad ttl": func() error { _, err := c.Multi(ctx, client.CreateOp(base+"/x", nil, client.Container)); return err },
			"delete root":   func() error { return c.Delete(ctx, "/", -1) },
		}
		for name, call := range calls {
			err := call()
			var ie *client.InputError
			assert.ErrorAs(t, err, &ie, name)
			assert.ErrorIs(t, err, client.ErrInvalidInput, name)
		}

		// Nothing was created, the session and the connection are the same.
		children, _, err := c.Children(ctx, base)
		require.NoError(t, err)
		assert.Empty(t, children)
		assert.Same(t, sess, c.Session())
		select {
		case ev := <-sub.Events():
			t.Fatalf("unexpected event after bad input: %+v", ev)
		default:
		}
		// Data at exactly the limit is sent, and the server accepts it.
		_, err = c.Create(ctx, base+"/max", make([]byte, client.MaxData(base+"/max")), client.Persistent)
		require.NoError(t, err)
		assert.Same(t, sess, c.Session())
	})
}
