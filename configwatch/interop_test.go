package configwatch_test

import (
	"testing"

	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A Python service publishes with kazoo as the package documentation
// says: with the ready flag at one path, atomically (after a first flag
// publish) at another. zkit reads both.
func TestKazooPublisher(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		flagged, atomic := zktest.UniquePath(t)+"/flag", zktest.UniquePath(t)+"/atomic"
		recipetest.RunKazoo(t, b.Servers, `
import os
from kazoo.client import KazooClient
zk = KazooClient(hosts=os.environ["ZK"])
zk.start()

def flag_publish(path, values):
    if zk.exists(path + "/ready"):
        zk.delete(path + "/ready")
    for k, v in values.items():
        if zk.exists(path + "/" + k):
            zk.set(path + "/" + k, v)
        else:
            zk.create(path + "/" + k, v, makepath=True)
    zk.create(path + "/ready", b"")

flag_publish("`+flagged+`", {"workers": b"4", "db": b'"primary"'})
flag_publish("`+atomic+`", {"workers": b"4", "db": b'"primary"'})
t = zk.transaction()
t.set_data("`+atomic+`/workers", b"16")
t.set_data("`+atomic+`/ready", b"")
for r in t.commit():
    assert not isinstance(r, Exception), r
zk.stop()
`)
		for path, want := range map[string]service{flagged: {Workers: 4, DB: "primary"}, atomic: {Workers: 16, DB: "primary"}} {
			s, err := configwatch.New(c, path, configwatch.JSON[service]).Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.Value != want {
				t.Errorf("%s: %+v, want %+v", path, s.Value, want)
			}
		}
	})
}
