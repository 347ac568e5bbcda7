package recipes

import (
	"context"
	"log/slog"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
)

// Removal says how Remove deletes a node.
type Removal struct {
	// Signal deletes the node with the release signal (see the package
	// documentation): SetOp then DeleteOp in one Multi. Only a holder may
	// send it.
	Signal bool
	// IfOwned deletes the node only while the session passed to Remove
	// owns it: a node of the same name that another session created
	// meanwhile is left alone. Used for nodes with a fixed name (a group
	// member, a rendezvous node); sequence nodes are never created again.
	IfOwned bool
	// Logger receives a warning when a background delete gives up.
	Logger *slog.Logger
}

// Remove deletes the ephemeral node path owned by sess, on every exit path
// of a recipe. It tries now, retrying through lost connections and replies
// (deleting twice is harmless) while ctx allows; when ctx ends first it
// hands the delete over to the background, where it goes on for as long as
// the client and sess live, and returns ctx's error. A node already gone
// counts as deleted, and so does a lost sess: the server deletes the
// ephemeral nodes of a lost session itself. When the client gave sess up
// on its own clock (disconnected for longer than its timeout), though,
// rather than the server expiring it or the client's Close ending it, the
// server may still keep sess and its node for up to a session timeout: the
// node is then deleted in the background under the client's next session,
// and only while sess owns it. Pass a context that has ended to delete in
// the background only.
func Remove(ctx context.Context, c *client.Client, sess *client.Session, path string, o Removal) error {
	return recipekit.Remove(ctx, c, sess, path, recipekit.Removal(o))
}

// done is a context that has ended: Remove(done, ...) deletes in the
// background only.
var done = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()
