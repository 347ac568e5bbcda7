package client_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Inside a namespace every path the caller gives, gets back or sees in an
// event is relative to it, and nothing outside it can be reached.
func TestNamespace(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		ns := zktest.UniquePath(t) + "/app"
		c := b.Connect(t, client.WithNamespace(ns))
		outside := b.Connect(t)
		require.Equal(t, ns, c.Namespace())
		ok, _, err := outside.Exists(ctx, ns)
		require.NoError(t, err)
		require.True(t, ok, "Connect creates the namespace")

		p, err := c.Create(ctx, "/q-", []byte("x"), client.PersistentSequential)
		require.NoError(t, err)
		require.Regexp(t, `^/q-[0-9]{10}$`, p)
		data, _, err := outside.Get(ctx, ns+p)
		require.NoError(t, err)
		require.Equal(t, "x", string(data))

		children, _, err := c.Children(ctx, "/")
		require.NoError(t, err)
		require.Equal(t, []string{p[1:]}, children)

		_, _, w, err := c.GetW(ctx, p)
		require.NoError(t, err)
		sub := c.Subscribe()
		defer sub.Close()
		_, err = outside.Set(ctx, ns+p, []byte("y"), -1)
		require.NoError(t, err)
		ev := <-w
		require.Equal(t, client.EventNodeDataChanged, ev.Type)
		require.Equal(t, p, ev.Path)
		for e := range sub.Events() {
			if e.Type == client.EventNodeDataChanged {
				require.Equal(t, p, e.Path)
				break
			}
		}

		res, err := c.Multi(ctx, client.CreateOp("/m", nil, client.Persistent), client.CheckOp(p, -1))
		require.NoError(t, err)
		require.Equal(t, "/m", res[0].Path)

		err = c.Delete(ctx, "/", -1)
		require.ErrorIs(t, err, client.ErrInvalidInput)
		_, _, err = c.Get(ctx, "/../x")
		require.ErrorIs(t, err, client.ErrInvalidInput)

		_, err = client.Connect(ctx, b.Servers, client.WithNamespace("/"))
		require.ErrorIs(t, err, client.ErrInvalidInput)
	})
}

// In a namespace, "/" is the namespace's own node: a Multi, or a create
// WithOps, may not delete it any more than Delete may. The delete is
// refused before anything is sent, and the namespace is still there.
func TestWithOpsNamespaceRoot(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		ns := zktest.UniquePath(t) + "/app"
		c := b.Connect(t, client.WithNamespace(ns))
		outside := b.Connect(t)

		_, err := c.Create(ctx, "/p", nil, client.Persistent, client.WithOps(client.DeleteOp("/", -1)))
		require.ErrorIs(t, err, client.ErrInvalidInput, "a create WithOps deleting the namespace")
		_, err = c.Multi(ctx, client.DeleteOp("/", -1))
		require.ErrorIs(t, err, client.ErrInvalidInput, "a Multi deleting the namespace")
		ok, _, err := outside.Exists(ctx, ns)
		require.NoError(t, err)
		require.True(t, ok, "the namespace's node was deleted")
	})
}

// The size limit counts the paths as the server gets them: inside a
// namespace, every op's path is the namespace's longer. A request that
// fits only without the namespace is refused before anything is sent,
// instead of making the server drop the connection.
func TestWithOpsSizeInNamespace(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		ns := zktest.UniquePath(t) + "/" + strings.Repeat("n", 1000)
		c := b.Connect(t, client.WithNamespace(ns))
		sess := c.Session()

		// The client's own count: 512 bytes of overhead, then 32 per op
		// plus its path, data and ACL (world:anyone here).
		create := 32 + len("/p") + 16 + len("world") + len("anyone")
		big := make([]byte, client.DefaultMaxBuffer-512-create-(32+len("/")))
		_, err := c.Create(ctx, "/p", nil, client.Persistent, client.WithOps(client.SetOp("/", big, -1)))
		var ie *client.InputError
		require.ErrorAs(t, err, &ie, "a transaction over the server's limit once the namespace is added")
		require.Same(t, sess, c.Session())
		ok, _, err := c.Exists(ctx, "/p")
		require.NoError(t, err)
		require.False(t, ok, "nothing applied")

		// A plain create likewise.
		_, err = c.Create(ctx, "/q", make([]byte, client.DefaultMaxBuffer-512-len("/q")), client.Persistent)
		require.ErrorAs(t, err, &ie, "a create over the server's limit once the namespace is added")
		require.Same(t, sess, c.Session())
	})
}

// Inside a namespace the namespace's own node is "/": a watch on it
// reports "/" as its path, to the watch and to subscribers.
func TestNamespaceRootWatch(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		c := b.Connect(t, client.WithNamespace(zktest.UniquePath(t)+"/app"))
		_, _, w, err := c.GetW(ctx, "/")
		require.NoError(t, err)
		_, err = c.Set(ctx, "/", []byte("x"), -1)
		require.NoError(t, err)
		select {
		case ev := <-w:
			require.Equal(t, client.WatchEvent{Type: client.EventNodeDataChanged, Path: "/"}, ev)
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatal("no event for the namespace's node")
		}
	})
}

// WithExistingNamespace creates nothing: Connect fails, naming the
// namespace, with an error matching ErrNoNode while it is missing, and
// works in it once it exists.
func TestExistingNamespace(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		parent := zktest.UniquePath(t)
		ns := parent + "/app"
		outside := b.Connect(t)
		_, err := client.Connect(ctx, b.Servers, client.WithNamespace(ns), client.WithExistingNamespace())
		require.ErrorIs(t, err, client.ErrNoNode)
		require.ErrorContains(t, err, ns)
		ok, _, err := outside.Exists(ctx, parent)
		require.NoError(t, err)
		require.False(t, ok, "Connect WithExistingNamespace created %s", parent)

		require.NoError(t, outside.EnsurePath(ctx, ns))
		_, err = outside.Create(ctx, ns+"/x", []byte("v"), client.Persistent)
		require.NoError(t, err)
		c := b.Connect(t, client.WithNamespace(ns), client.WithExistingNamespace())
		data, _, err := c.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, "v", string(data))
	})
}

// WithNamespaceAsIs neither creates nor checks the namespace: Connect
// succeeds in a missing one, a read there finds no node, and a watch set
// there fires once the namespace and the node are created.
func TestNamespaceAsIs(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		parent := zktest.UniquePath(t)
		ns := parent + "/app"
		outside := b.Connect(t)
		c := b.Connect(t, client.WithNamespace(ns), client.WithNamespaceAsIs())
		_, _, err := c.Get(ctx, "/x")
		require.ErrorIs(t, err, client.ErrNoNode)
		ok, _, err := outside.Exists(ctx, parent)
		require.NoError(t, err)
		require.False(t, ok, "Connect WithNamespaceAsIs created %s", parent)

		ok, _, w, err := c.ExistsW(ctx, "/x")
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, outside.EnsurePath(ctx, ns))
		_, err = outside.Create(ctx, ns+"/x", []byte("v"), client.Persistent)
		require.NoError(t, err)
		select {
		case <-w:
		case <-ctx.Done():
			t.Fatal("the watch on /x in the missing namespace never fired")
		}
		data, _, err := c.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, "v", string(data))
	})
}
