package client_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// serverOf returns the server of servers whose cons lists session, or ""
// when none does.
func serverOf(t *testing.T, servers []string, session int64) string {
	t.Helper()
	for _, s := range servers {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(5*time.Second))
		connected, err := zktest.ConnectedSessions(ctx, s)
		cancel()
		if err == nil && connected[session] {
			return s
		}
	}
	return ""
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// A client given one server of an ensemble that can be reconfigured
// learns the others from its configuration, then each server added; when
// the server it is connected to is removed, it moves to another, on the
// same session.
func TestEnsembleTracker(t *testing.T) {
	z := zktest.StartEnsemble(t, 3, zktest.WithReconfig(), zktest.WithSuperUser("super", "secret"))
	c := connect(t, z.Servers()[:1], client.WithEnsembleTracker())
	eventually(t, zktest.Scale(20*time.Second), "the client learns the three servers", func() bool {
		return slices.Equal(sorted(c.Servers()), sorted(z.Servers()))
	})
	admin := connect(t, z.Servers(), client.WithAuth("digest", []byte("super:secret")))
	ctx := testCtx(t)
	j := z.Join()
	_, _, err := admin.Reconfig(ctx, client.ConfigChange{Add: []string{z.ServerLine(j, "participant")}})
	require.NoError(t, err)
	eventually(t, zktest.Scale(20*time.Second), "the client learns the added server", func() bool {
		return slices.Equal(sorted(c.Servers()), sorted(z.Servers()))
	})

	session := c.Session().ID()
	on := serverOf(t, z.Servers(), session)
	require.NotEmpty(t, on, "no server lists the client's session")
	id := slices.Index(z.Servers(), on) + 1
	_, _, err = admin.Reconfig(ctx, client.ConfigChange{Remove: []string{strconv.Itoa(id)}})
	require.NoError(t, err)
	eventually(t, zktest.Scale(20*time.Second), "the client moves off the removed server", func() bool {
		now := serverOf(t, z.Servers(), session)
		return now != "" && now != on && !slices.Contains(c.Servers(), on)
	})
	assert.Equal(t, session, c.Session().ID(), "the session")
	assert.True(t, c.Session().Alive())
}

// On a server without a dynamic configuration (ZooKeeper standalone, the
// reference server) the tracker watches the configuration and leaves the
// client's servers as they are.
func TestEnsembleTrackerStandalone(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t, client.WithEnsembleTracker())
		eventually(t, zktest.Scale(20*time.Second), "the tracker watches the configuration", func() bool {
			paths, err := zktest.WatchedPaths(testCtx(t), b.Addr(), c.Session().ID())
			return err == nil && paths[client.ConfigNode]
		})
		assert.Equal(t, b.Servers, c.Servers())
	})
}
