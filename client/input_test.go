package client_test

import (
	"context"
	"errors"
	"net"
	"strings"
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
	t.Parallel()
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
			"set version":   func() error { _, err := c.Set(ctx, base, nil, -2); return err },
			"acl version":   func() error { _, err := c.SetACL(ctx, base, client.OpenACL, -3); return err },
			"check version": func() error { _, err := c.Multi(ctx, client.CheckOp(base, -2)); return err },
			"multi set version": func() error {
				_, err := c.Multi(ctx, client.CreateOp(base+"/x", nil, client.Persistent), client.SetOp(base, nil, -7))
				return err
			},
			"empty acl": func() error { _, err := c.Create(ctx, base+"/a", nil, client.Persistent, client.WithACL()); return err },
			"acl without perms": func() error {
				_, err := c.Create(ctx, base+"/a", nil, client.Persistent, client.WithACL(client.ACL{Scheme: "world", ID: "anyone"}))
				return err
			},
			"acl bad perms": func() error {
				_, err := c.Create(ctx, base+"/a", nil, client.Persistent, client.WithACL(client.ACL{Perms: 0x7f, Scheme: "world", ID: "anyone"}))
				return err
			},
			"acl unknown scheme": func() error {
				_, err := c.CreateProtected(ctx, base+"/p-", nil, client.EphemeralSequential,
					client.WithACL(client.ACL{Perms: client.PermAll, Scheme: "nis", ID: "alice"}))
				return err
			},
			"acl plain digest": func() error {
				_, err := c.SetACL(ctx, base, []client.ACL{{Perms: client.PermAll, Scheme: "digest", ID: "alice:secret"}}, -1)
				return err
			},
			"multi acl": func() error {
				_, err := c.Multi(ctx, client.CreateOp(base+"/x", nil, client.Persistent, client.ACL{Perms: client.PermAll, Scheme: "ip", ID: "::1"}))
				return err
			},
		}
		for name, call := range calls {
			err := call()
			var ie *client.InputError
			assert.ErrorAs(t, err, &ie, name)
			assert.ErrorIs(t, err, client.ErrInvalidInput, name)
			if strings.Contains(name, "acl") && name != "acl version" {
				assert.ErrorIs(t, err, client.ErrInvalidACL, "%s: matches the server's error too", name)
			}
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
		// The ACL is unchanged.
		acl, _, err := c.GetACL(ctx, base)
		require.NoError(t, err)
		assert.Equal(t, client.OpenACL, acl)
		// Data at exactly the limit is sent, and the server accepts it.
		_, err = c.Create(ctx, base+"/max", make([]byte, client.MaxData(base+"/max")), client.Persistent)
		require.NoError(t, err)
		assert.Same(t, sess, c.Session())
	})
}

// Bad options are refused by Connect before it dials.
func TestBadOptionsAreRejected(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	servers := []string{"127.0.0.1:1"} // never dialled
	for name, opt := range map[string]client.Option{
		"default acl":     client.WithDefaultACL(client.ACL{Perms: client.PermAll, Scheme: "world", ID: "all"}),
		"empty default":   client.WithDefaultACL(),
		"empty scheme":    client.WithAuth("", []byte("x")),
		"session timeout": client.WithSessionTimeout(-time.Second),
		"no timeout":      client.WithSessionTimeout(0),
		"max buffer":      client.WithMaxBuffer(0),
		"negative buffer": client.WithMaxBuffer(-1 << 20),
		"no subscription": client.WithSubscriptionBuffer(0),
		"negative queue":  client.WithSubscriptionBuffer(-1),
	} {
		_, err := client.Connect(ctx, servers, opt)
		var ie *client.InputError
		assert.ErrorAs(t, err, &ie, name)
	}
	// A custom scheme's ACL is accepted by a client that authenticates with
	// it: Connect goes on to dial.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := client.Connect(short, servers,
		client.WithAuth("ldap", []byte("alice")),
		client.WithDefaultACL(client.ACL{Perms: client.PermAll, Scheme: "ldap", ID: "alice"}),
		client.WithDialer(func(string, string, time.Duration) (net.Conn, error) { return nil, errors.New("no network here") }))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
