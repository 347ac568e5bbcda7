package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A call whose reply has come when its context ends returns the
// reply: a write that was answered is not reported cut off (its outcome
// would be unknown) because the caller's context ended at the same moment.
func TestDirectReplyWinsOverEndedContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 100 {
		reply := make(chan directReply, 1)
		reply <- directReply{zxid: int64(i + 1)}
		p := &pending{c: &Client{}, reply: reply}
		zxid, err := p.wait(ctx, nil)
		require.NoError(t, err, "attempt %d", i)
		require.Equal(t, int64(i+1), zxid)
	}
}
