package recipes

import (
	"context"

	"github.com/zkit-dev/zkit/client"
)

// Pause waits before a request sent under sess, which failed in a way
// that retrying cures (client.IsRetryable: refused while the connection
// was down), is sent again: b's next delay, or until ctx ends (ctx's
// error). Once sess is lost it returns LostSession at once instead: what
// the request was for (a node of sess's, a place in line) went with the
// session, and sending it again under the client's next session would be
// another attempt, which is the caller's to decide.
func Pause(ctx context.Context, c *client.Client, sess *client.Session, b *client.Backoff) error {
	if !sess.Alive() {
		return LostSession(c, sess.Err())
	}
	return b.Wait(ctx)
}
