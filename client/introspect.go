package client

import (
	"context"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Questions about the session and the tree that ZooKeeper answers in one
// request.

// Ephemerals returns the paths of the ephemeral nodes the current session
// owns whose path starts with prefix, as a string ("/app" matches
// "/apple" too; "" or "/" matches every one), in no particular order.
// Inside a namespace the prefix and the paths are the client's (a session
// creates its nodes inside it). ZooKeeper 3.6 and later; an
// older server answers ErrUnimplemented, and closes the connection (the
// session lives on).
func (c *Client) Ephemerals(ctx context.Context, prefix string) ([]string, error) {
	if prefix != "" {
		if err := c.checkPath("ephemerals", prefix, false); err != nil {
			return nil, err
		}
	}
	abs := c.abs(prefix)
	if prefix == "" {
		abs = c.abs("/")
	}
	return doDirect(c, request{"ephemerals", prefix, false}, func() ([]string, error) {
		var resp jute.GetEphemeralsResponse
		if _, err := direct(ctx, c, jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: abs}, &resp); err != nil {
			return nil, err
		}
		out := make([]string, len(resp.Ephemerals))
		for i, p := range resp.Ephemerals {
			out[i] = c.rel(p)
		}
		return out, nil
	})
}

// AllChildrenNumber returns how many nodes lie below path: its children,
// theirs, and so on (the node itself not counted). ZooKeeper 3.6 and
// later; an older server answers ErrUnimplemented, and closes the
// connection (the session lives on).
func (c *Client) AllChildrenNumber(ctx context.Context, path string) (int, error) {
	if err := c.checkPath("allChildrenNumber", path, false); err != nil {
		return 0, err
	}
	return doDirect(c, request{"allChildrenNumber", path, false}, func() (int, error) {
		var resp jute.GetAllChildrenNumberResponse
		if _, err := direct(ctx, c, jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: c.abs(path)}, &resp); err != nil {
			return 0, err
		}
		return int(resp.TotalNumber), nil
	})
}

// ClientInfo is one identity the server holds for a session: its scheme
// ("ip", "digest", "x509", ...) and the user it names (the address, the
// digest's user name, the certificate's subject).
type ClientInfo struct {
	Scheme string
	User   string
}

// WhoAmI returns the identities the server holds for the current session:
// the address it connected from, and every credential it accepted (the
// client's WithAuth and AddAuth, a TLS client certificate). ZooKeeper 3.7
// and later: an older server answers ErrUnimplemented, and closes the
// connection, as for any request it does not know (the session lives on;
// a call in flight on that connection fails as for any lost connection).
func (c *Client) WhoAmI(ctx context.Context) ([]ClientInfo, error) {
	return doDirect(c, request{"whoAmI", "", false}, func() ([]ClientInfo, error) {
		var resp jute.WhoAmIResponse
		if _, err := direct(ctx, c, jute.OpWhoAmI, &jute.Empty{}, &resp); err != nil {
			return nil, err
		}
		out := make([]ClientInfo, len(resp.ClientInfo))
		for i, ci := range resp.ClientInfo {
			out[i] = ClientInfo{Scheme: ci.AuthScheme, User: ci.User}
		}
		return out, nil
	})
}
