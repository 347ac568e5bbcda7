package rwlock_test

import (
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

func init() { extraBackends = append(extraBackends, refBackend) }

// refBackend is a reference server of the test's own.
func refBackend(t *testing.T) *backend {
	s := zktest.NewServer(t)
	return &backend{
		name:    "refserver",
		servers: s.Servers(),
		expire: func(t *testing.T, sess *client.Session) {
			if !s.ExpireSession(sess.ID()) {
				t.Fatalf("session 0x%x was not alive", sess.ID())
			}
		},
		cutNextCreate: func(t *testing.T, dir string) []client.Option {
			s.DropReplyAfterCommit(func(op, path string) bool {
				return strings.HasPrefix(op, "create") && strings.HasPrefix(path, dir+"/")
			})
			return nil
		},
		blackhole: func(t *testing.T) ([]client.Option, func(), func()) {
			p := zktest.NewProxy(t, s.Addr())
			return []client.Option{proxied(p)}, p.Blackhole, p.Heal
		},
	}
}
