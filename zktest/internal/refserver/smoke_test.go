package refserver

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestSmokeGoZookeeper(t *testing.T) {
	s := startTest(t, Config{})
	c, _ := zkConnect(t, s.Addr())
	p, err := c.Create("/a", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	if err != nil || p != "/a" {
		t.Fatal(p, err)
	}
	data, st, err := c.Get("/a")
	if err != nil || string(data) != "x" || st.Version != 0 {
		t.Fatal(data, st, err)
	}
	_, _, ch, err := c.GetW("/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set("/a", []byte("y"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Type != zk.EventNodeDataChanged {
			t.Fatal(ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	seq, err := c.Create("/a/s-", nil, zk.FlagSequence|zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil || seq != "/a/s-0000000000" {
		t.Fatal(seq, err)
	}
	res, err := c.Multi(&zk.CreateRequest{Path: "/b", Acl: zk.WorldACL(zk.PermAll)}, &zk.SetDataRequest{Path: "/a", Version: 5})
	t.Log(res, err)
	if err != zk.ErrBadVersion {
		t.Fatal(err)
	}
	if ok, _, _ := c.Exists("/b"); ok {
		t.Fatal("multi applied")
	}
	if err := c.Delete("/a", -1); err != zk.ErrNotEmpty {
		t.Fatal(err)
	}
	kids, _, err := c.Children("/")
	t.Log(kids, err)
}
