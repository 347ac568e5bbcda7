package recipes

import (
	"time"

	"github.com/zkit-dev/zkit/client"
)

// tolerance follows a client's connection on behalf of one held thing
// that may stay held while the connection is suspended for up to a
// tolerance (LeaseOptions.SuspendTolerance, KeepOptions.SuspendTolerance).
// It reads the client's state directly (client.Changed): a thousand
// leases cost no subscription each.
type tolerance struct {
	c     *client.Client
	limit time.Duration
	timer *time.Timer // running while the connection is suspended
}

// check reads the connection state now. It returns a channel closed at
// the next change of the connection, a channel that fires once the
// current suspension outlasts the tolerance (nil while connected), over
// when it already has, and resumed when the connection came back since the
// last check: watches may have missed events meanwhile, so look again.
func (t *tolerance) check() (changed <-chan struct{}, expired <-chan time.Time, over, resumed bool) {
	changed = t.c.Changed()
	suspended, since := t.c.Suspended()
	switch {
	case suspended && t.timer == nil:
		left := t.limit - time.Since(since)
		if left <= 0 {
			return changed, nil, true, false
		}
		t.timer = time.NewTimer(left)
	case !suspended && t.timer != nil:
		t.stop()
		resumed = true
	}
	if t.timer != nil {
		expired = t.timer.C
	}
	return changed, expired, false, resumed
}

// stop releases the timer.
func (t *tolerance) stop() {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}
