package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A change that is not one is refused before anything is sent.
func TestReconfigInput(t *testing.T) {
	c := zktest.ReferenceBackend(t).Connect(t)
	line := "server.4=127.0.0.1:1:2;3"
	for _, ch := range []client.ConfigChange{
		{},
		{Members: []string{line}, Add: []string{line}},
		{Members: []string{line}, Remove: []string{"1"}},
		{Add: []string{""}},
		{Add: []string{"server.4=127.0.0.1:1:2;3,server.5=127.0.0.1:4:5;6"}},
		{Add: []string{"127.0.0.1:1:2"}},
		{Remove: []string{"three"}},
		{Remove: []string{"-1"}},
		{Add: []string{line}, FromVersion: -1},
	} {
		_, _, err := c.Reconfig(testCtx(t), ch)
		var in *client.InputError
		assert.True(t, errors.As(err, &in), "%+v: %v", ch, err)
	}
}

// A server without reconfigEnabled says so; a standalone one with it
// cannot change its membership: both servers alike.
func TestReconfigRefused(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		_, _, err := b.Connect(t).Reconfig(testCtx(t), client.ConfigChange{Remove: []string{"2"}})
		assert.ErrorIs(t, err, client.ErrReconfigDisabled)
	})
	zktest.EachBackendWith(t, []zktest.Option{zktest.WithConfig("reconfigEnabled", "true")}, []zktest.ServerOption{zktest.ServerReconfigEnabled()},
		func(t *testing.T, b zktest.Backend) {
			_, _, err := b.Connect(t).Reconfig(testCtx(t), client.ConfigChange{Remove: []string{"2"}})
			assert.ErrorIs(t, err, client.ErrUnimplemented)
		})
}

// On an ensemble that can be reconfigured: a server that joined is added
// as a participant and removed again by a super user; the configuration
// returned is the new one, as GetConfig then reads it; a change from
// another version than the current one, one without credentials, and the
// addition of a server that does not run are refused, each with its error.
func TestReconfig(t *testing.T) {
	z := zktest.StartEnsemble(t, 3, zktest.WithReconfig(), zktest.WithSuperUser("super", "secret"))
	ctx := testCtx(t)
	anyone := connect(t, z.Servers())
	super := connect(t, z.Servers(), client.WithAuth("digest", []byte("super:secret")))
	j := z.Join()
	add := client.ConfigChange{Add: []string{z.ServerLine(j, "participant")}}
	_, _, err := anyone.Reconfig(ctx, add)
	require.ErrorIs(t, err, client.ErrNoAuth)

	// Three voters that do not run, beside the three that do: the four
	// a quorum of six needs are not there.
	ghosts := client.ConfigChange{Add: []string{"server.7=127.0.0.1:1:2;127.0.0.1:3",
		"server.8=127.0.0.1:4:5;127.0.0.1:6", "server.9=127.0.0.1:7:8;127.0.0.1:9"}}
	_, _, err = super.Reconfig(ctx, ghosts)
	require.ErrorIs(t, err, client.ErrNewConfigNoQuorum)

	before, st, err := super.GetConfig(ctx)
	require.NoError(t, err)
	_, _, err = super.Reconfig(ctx, client.ConfigChange{Add: add.Add, FromVersion: st.Mzxid + 1000})
	require.ErrorIs(t, err, client.ErrBadVersion)

	cfg, st2, err := super.Reconfig(ctx, add)
	require.NoError(t, err)
	assert.Contains(t, string(cfg), z.ServerLine(j, "participant")+"\n")
	assert.Greater(t, st2.Mzxid, st.Mzxid)
	require.NoError(t, super.Sync(ctx, "/"))
	now, _, err := super.GetConfig(ctx)
	require.NoError(t, err)
	assert.Equal(t, string(cfg), string(now))
	assert.NotEqual(t, string(before), string(now))

	cfg, _, err = super.Reconfig(ctx, client.ConfigChange{Remove: []string{"4"}})
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(cfg), "server.4="), "server 4 is still in %q", cfg)
}

// Validate says what Reconfig would refuse, without a client.
func TestConfigChangeValidate(t *testing.T) {
	assert.NoError(t, client.ConfigChange{Remove: []string{"3"}}.Validate())
	var in *client.InputError
	assert.True(t, errors.As(client.ConfigChange{Remove: []string{"three"}}.Validate(), &in))
}
