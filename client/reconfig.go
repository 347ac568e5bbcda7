package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Errors of Reconfig. ErrReconfigDisabled keeps go-zookeeper's message.
var (
	// ErrReconfigDisabled: the ensemble runs without reconfigEnabled=true.
	ErrReconfigDisabled = errors.New("attempts to perform a reconfiguration operation when reconfiguration feature is disabled")
	// ErrReconfigInProgress: the leader has not committed the last
	// reconfiguration yet. Retry shortly.
	ErrReconfigInProgress = errors.New("zk: another reconfiguration is in progress")
	// ErrNewConfigNoQuorum: no quorum of the new configuration was
	// connected to the leader and up to date, so the leader did not
	// propose it. A server to add must run and have synced first.
	ErrNewConfigNoQuorum = errors.New("zk: no quorum of the new configuration is connected and up to date with the leader")
)

// ConfigChange is a change of the ensemble's membership (Reconfig):
// incremental (Add, Remove) or whole (Members).
//
// A server is given as a line of ZooKeeper's dynamic configuration,
// "server.ID=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE];[CLIENT_HOST:]CLIENT_PORT"
// ("ID=..." too), ROLE participant (the default) or observer. Adding a
// server that is already a member with other ports or another role
// changes it.
type ConfigChange struct {
	Add     []string // servers to add, or to change
	Remove  []string // the ids of servers to remove ("3")
	Members []string // the whole new membership, instead of Add and Remove
	// FromVersion applies the change only to the configuration of that
	// version (the hexadecimal "version=" line of ConfigNode, a zxid), and
	// fails with ErrBadVersion otherwise; 0 applies it to whatever the
	// configuration is.
	FromVersion int64
}

// Reconfig changes the ensemble's membership (ZooKeeper 3.5 and later,
// with reconfigEnabled=true) and returns the new configuration as
// GetConfig does, with ConfigNode's Stat.
//
// ZooKeeper lets only a super user (zookeeper.DigestAuthenticationProvider.
// superDigest: add its credentials with WithAuth) or a client with write
// access to ConfigNode reconfigure (ErrNoAuth otherwise), unless the
// servers run with skipACL=yes. A server to add must already run and be
// synced with the leader (started with the current configuration plus
// itself, as ZooKeeper's administrator guide says); the leader proposes a
// new configuration only when a quorum of it is (ErrNewConfigNoQuorum
// otherwise). A removed server is not stopped: it goes on as a non-voting
// follower, its clients connected, until it is shut down.
//
// The server answers ErrReconfigDisabled without reconfigEnabled,
// ErrUnimplemented on a standalone server, ErrReconfigInProgress while
// the last reconfiguration is not committed, and ErrBadArguments for a
// change it cannot apply (fewer than two participants when
// standaloneEnabled is true, say). A change that is not one (none, or
// Members with Add or Remove, or an id that is not a number) is an
// *InputError, and nothing is sent. Reconfig is a write: a reply lost
// with the connection makes its outcome unknown (read ConfigNode again).
func (c *Client) Reconfig(ctx context.Context, change ConfigChange) ([]byte, *Stat, error) {
	req, err := change.request()
	if err != nil {
		return nil, nil, err
	}
	got, err := doDirect(c, request{"reconfig", "", true}, func() (pair[[]byte], error) {
		var resp jute.GetDataResponse
		if _, err := direct(ctx, c, jute.OpReconfig, req, &resp); err != nil {
			return pair[[]byte]{}, err
		}
		return pair[[]byte]{resp.Data, statOf(&resp.Stat)}, nil
	})
	return got.v, got.stat, err
}

// Validate returns the *InputError Reconfig would return for ch, or nil:
// a check before connecting.
func (ch ConfigChange) Validate() error {
	_, err := ch.request()
	return err
}

// request is the change on the wire: comma-separated lists, and -1 for
// any version.
func (ch ConfigChange) request() (*jute.ReconfigRequest, error) {
	bad := func(format string, args ...any) (*jute.ReconfigRequest, error) {
		return nil, &InputError{Op: "reconfig", Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case len(ch.Add) == 0 && len(ch.Remove) == 0 && len(ch.Members) == 0:
		return bad("no change: give servers to add or remove, or the new members")
	case len(ch.Members) > 0 && (len(ch.Add) > 0 || len(ch.Remove) > 0):
		return bad("the new members replace the configuration: give them, or servers to add and remove, not both")
	case ch.FromVersion < 0:
		return bad("version %d: want a configuration's version, or 0 for any", ch.FromVersion)
	}
	for _, list := range [][]string{ch.Add, ch.Members} {
		for _, s := range list {
			if s == "" || strings.ContainsAny(s, ", \t\r\n") || !strings.Contains(s, "=") {
				return bad("server %q: want one line of a dynamic configuration, server.ID=HOST:PORT:PORT[:ROLE];[HOST:]PORT", s)
			}
		}
	}
	for _, id := range ch.Remove {
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 0 {
			return bad("server id %q to remove: want a server's number", id)
		}
	}
	version := ch.FromVersion
	if version == 0 {
		version = -1
	}
	return &jute.ReconfigRequest{JoiningServers: strings.Join(ch.Add, ","), LeavingServers: strings.Join(ch.Remove, ","),
		NewMembers: strings.Join(ch.Members, ","), CurConfigID: version}, nil
}
