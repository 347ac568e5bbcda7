package recipetest

import (
	"slices"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// GiveUpSession makes c give its session up while the server still has
// it: it blackholes p, the proxy c connects through, and restarts ref, the
// reference server, every quarter of timeout (c's session timeout), which
// resets the server's session timers as a restart or a leader election
// does, until c declares the session lost and every channel of also is
// closed. It returns that session, and fails the test if the server
// expired it too. The proxy stays blackholed: the caller heals it.
func GiveUpSession(t *testing.T, ref *zktest.Server, p *zktest.Proxy, c *client.Client, timeout time.Duration, also ...<-chan struct{}) *client.Session {
	t.Helper()
	old := c.Session()
	p.Blackhole()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(timeout / 4):
				if err := ref.Restart(); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	Within(t, old.Done(), "the client giving its session up")
	for _, ch := range also {
		Within(t, ch, "the end of what the session held")
	}
	close(stop)
	<-stopped
	if !slices.Contains(ref.Sessions(), old.ID()) {
		t.Fatal("the server expired the session too: nothing lingers")
	}
	return old
}
