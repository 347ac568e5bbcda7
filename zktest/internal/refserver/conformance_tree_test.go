package refserver_test

import (
	"strings"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Scenarios on the data tree: create modes, paths, delete, data, children
// and Stat fields.
func init() {
	register(
		scenario{"create-persistent", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), []byte("hello"), 0)
			a.create(e.p("/n"), []byte("again"), 0)
			a.get(e.p("/n"), false)
			a.exists(e.p("/n"), false)
			a.exists(e.base, false)
		}},
		scenario{"create2-stat", func(e *env) {
			a := e.session()
			a.create2(e.p("/n"), []byte("x"), 0)
			a.create2(e.p("/n/c"), nil, 0)
			a.exists(e.p("/n"), false)
			a.children2(e.p("/n"), false)
		}},
		scenario{"create-null-and-empty-data", func(e *env) {
			a := e.session()
			a.create(e.p("/nil"), nil, 0)
			a.create(e.p("/empty"), []byte{}, 0)
			a.create(e.p("/big"), []byte(strings.Repeat("z", 4096)), 0)
			a.get(e.p("/nil"), false)
			a.get(e.p("/empty"), false)
			a.get(e.p("/big"), false)
		}},
		scenario{"create-ephemeral", func(e *env) {
			a := e.session()
			a.create2(e.p("/e"), nil, jute.FlagEphemeral)
			a.create(e.p("/e/child"), nil, 0)
			a.create(e.p("/e/child"), nil, jute.FlagEphemeral)
			a.create(e.p("/e/"), nil, jute.FlagPersistentSequential)
			a.exists(e.p("/e"), false)
		}},
		scenario{"create-sequential", func(e *env) {
			a := e.session()
			for i := 0; i < 3; i++ {
				a.create(e.p("/q-"), nil, jute.FlagPersistentSequential)
			}
			a.del(e.p("/q-0000000001"), -1)
			a.create(e.p("/q-"), nil, jute.FlagPersistentSequential)
			a.create(e.p("/other"), nil, 0)
			a.create(e.p("/q-"), nil, jute.FlagEphemeralSequential)
			a.create2(e.p("/"), nil, jute.FlagPersistentSequential)
			a.children2(e.base, false)
		}},
		scenario{"create-sequential-failed-creates-do-not-count", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), nil, 0)
			a.create(e.p("/x"), nil, 0) // NodeExists
			a.create(e.p("/q-"), nil, jute.FlagPersistentSequential)
			a.create(e.p("/missing/q-"), nil, jute.FlagPersistentSequential)
			a.create(e.p("/q-"), nil, jute.FlagPersistentSequential)
		}},
		scenario{"create-no-parent", func(e *env) {
			a := e.session()
			a.create(e.p("/a/b"), nil, 0)
			a.create(e.p("/a/b/c"), nil, jute.FlagEphemeral)
			a.create2(e.p("/a/b-"), nil, jute.FlagPersistentSequential)
		}},
		scenario{"create-bad-paths", func(e *env) {
			a := e.session()
			for _, p := range []string{"", "a", "a/b", e.p("/"), e.p("//x"), e.p("/x/"), e.p("/."), e.p("/.."),
				e.p("/x/./y"), e.p("/x/../y"), e.p("/..."), e.p("/.x"), e.p("/nul\x00"), e.p("/ctl\x01"), e.p("/del\x7f"),
				e.p("/\u00e9t\u00e9"), e.p("/priv\ue000"), e.p("/emoji\U0001F600"), e.p("/bad\xff"), e.p("/ok-_:;@")} {
				a.create(p, nil, 0)
			}
			a.create("/", nil, 0)
			a.children(e.base, false)
		}},
		scenario{"create-invalid-flags", func(e *env) {
			a := e.session()
			for _, f := range []int32{7, 8, -1, 100} {
				a.create(e.p("/f"), nil, f)
			}
			a.call(jute.OpCreate, &jute.CreateRequest{Path: e.p("/c"), ACL: openACL, Flags: jute.FlagContainer})
			a.exists(e.p("/c"), false)
		}},
		scenario{"create-under-zookeeper", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), nil, 0)
			a.exists("/zookeeper", false)
			a.exists("/zookeeper/quota", false)
			a.exists("/zookeeper/config", false)
			a.get("/zookeeper/config", false)
			a.children("/zookeeper", false)
			a.create("/zookeeper/cf-test", []byte("x"), 0)
			a.del("/zookeeper/cf-test", -1)
			a.create("/zookeeper/config/x", nil, 0)
		}},
		scenario{"zookeeper-config-protected", func(e *env) {
			a := e.session()
			a.set("/zookeeper/config", []byte("x"), -1)
			a.setACL("/zookeeper/config", openACL, -1)
			a.create("/zookeeper/config/c", nil, 0)
			a.del("/zookeeper/config", -1)
			a.getACL("/zookeeper/quota")
		}},
		scenario{"create-container", func(e *env) {
			a := e.session()
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/box"), ACL: openACL, Flags: jute.FlagContainer})
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/box2"), ACL: openACL, Flags: 0})
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/box3"), ACL: openACL, Flags: jute.FlagEphemeral})
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/box4"), ACL: openACL, Flags: jute.FlagPersistentWithTTL})
			a.create(e.p("/box/child"), nil, jute.FlagEphemeral)
			a.create(e.p("/box3/child"), nil, 0)
			a.exists(e.p("/box"), false)
			a.exists(e.p("/box3"), false)
			// Leave no container for the reaper to take during a later
			// scenario.
			a.del(e.p("/box/child"), -1)
			a.del(e.p("/box"), -1)
		}},
		scenario{"container-reaping", func(e *env) {
			a := e.session()
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/used"), ACL: openACL, Flags: jute.FlagContainer})
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/unused"), ACL: openACL, Flags: jute.FlagContainer})
			a.call(jute.OpCreateContainer, &jute.CreateRequest{Path: e.p("/full"), ACL: openACL, Flags: jute.FlagContainer})
			a.create(e.p("/used/c"), nil, 0)
			a.create(e.p("/full/c"), nil, 0)
			a.exists(e.p("/used"), true)
			a.del(e.p("/used/c"), -1)
			a.events(1)
			a.exists(e.p("/used"), false)
			a.exists(e.p("/unused"), false)
			a.exists(e.p("/full"), false)
		}},
		scenario{"create-ttl", func(e *env) {
			a := e.session()
			ttl := func(p string, flags int32, ttl int64) {
				a.call(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: p, ACL: openACL, Flags: flags, TTL: ttl})
			}
			ttl(e.p("/t"), jute.FlagPersistentWithTTL, 60000)
			ttl(e.p("/t-"), jute.FlagPersistentSequentialWithTT, 60000)
			ttl(e.p("/zero"), jute.FlagPersistentWithTTL, 0)
			ttl(e.p("/neg"), jute.FlagPersistentWithTTL, -5)
			ttl(e.p("/huge"), jute.FlagPersistentWithTTL, 1<<40)
			ttl(e.p("/max"), jute.FlagPersistentWithTTL, 1<<40-1)
			ttl(e.p("/plain"), 0, 1000)
			ttl(e.p("/eph"), jute.FlagEphemeral, 1000)
			a.create(e.p("/nottl"), nil, jute.FlagPersistentWithTTL)
			a.exists(e.p("/t"), false)
			a.create(e.p("/t/child"), nil, 0)
		}},
		scenario{"ttl-reaping", func(e *env) {
			a := e.session()
			ttl := func(p string, ms int64) {
				a.call(jute.OpCreateTTL, &jute.CreateTTLRequest{Path: p, ACL: openACL, Flags: jute.FlagPersistentWithTTL, TTL: ms})
			}
			// Long enough that the reaper (every 100 ms) cannot take the
			// nodes before the next requests, however loaded the machine.
			ttl(e.p("/short"), 1000)
			ttl(e.p("/parent"), 1000)
			a.create(e.p("/parent/c"), nil, 0)
			a.exists(e.p("/short"), true)
			a.events(1)
			a.exists(e.p("/parent"), false)
		}},
		scenario{"delete", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.create(e.p("/n/c"), nil, 0)
			a.del(e.p("/n"), -1)
			a.del(e.p("/n/c"), 3)
			a.del(e.p("/n/c"), 0)
			a.del(e.p("/n/c"), -1)
			a.del(e.p("/n"), 0)
			a.del(e.p("/missing/x"), -1)
			a.exists(e.base, false)
		}},
		scenario{"delete-special-and-bad-paths", func(e *env) {
			a := e.session()
			for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config", "", "a", e.p("/"),
				e.p("//"), e.p("/x\x00")} {
				a.del(p, -1)
			}
		}},
		scenario{"delete-parent-stat", func(e *env) {
			a := e.session()
			a.create(e.p("/p"), nil, 0)
			a.create(e.p("/p/a"), nil, 0)
			a.create(e.p("/p/b"), nil, 0)
			a.create(e.p("/p/c"), nil, 0)
			a.del(e.p("/p/b"), -1)
			a.exists(e.p("/p"), false)
			a.del(e.p("/p/a"), -1)
			a.del(e.p("/p/c"), -1)
			a.children2(e.p("/p"), false)
		}},
		scenario{"set-data", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), []byte("v0"), 0)
			a.set(e.p("/n"), []byte("v1"), 0)
			a.set(e.p("/n"), []byte("v2"), 0)
			a.set(e.p("/n"), []byte("v2b"), -1)
			a.set(e.p("/n"), nil, 2)
			a.get(e.p("/n"), false)
			a.set(e.p("/n"), []byte{}, -1)
			a.get(e.p("/n"), false)
			a.set(e.p("/missing"), nil, -1)
			a.set(e.p("/bad/"), nil, -1)
			a.set("", nil, -1)
			a.exists(e.base, false)
		}},
		scenario{"null-paths", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			for _, op := range []int32{jute.OpGetData, jute.OpExists, jute.OpGetChildren, jute.OpDelete, jute.OpCreate, jute.OpSetData, jute.OpGetACL} {
				a.SendXid(200+op, op, rawBody("\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
				events, h, err := a.Await(200+op, nil, 5*time.Second)
				a.logEvents(events)
				if err != nil {
					e.logf("a: null path %s -> %v", jute.OpName(op), err)
					a.lost = true
					return
				}
				e.logf("a: null path %s -> %s zxid=%s", jute.OpName(op), jute.Error(h.Err).Name(), e.zx(h.Zxid))
			}
			a.call(jute.OpGetEphemerals, rawBody("\xff\xff\xff\xff"))
		}},
		scenario{"get-data-edge-paths", func(e *env) {
			a := e.session()
			a.get(e.p("/missing"), false)
			a.get("/", false)
			a.get("", false)
			a.get("zookeeper", false)
			a.get("/zookeeper/", false)
			a.exists("", false)
			a.exists("a", false)
			a.exists(e.p("/x\x00y"), false)
			a.children("", false)
		}},
		scenario{"children", func(e *env) {
			a := e.session()
			for _, n := range []string{"b", "a", "c", "a1", "0"} {
				a.create(e.p("/"+n), nil, 0)
			}
			a.children(e.base, false)
			a.children2(e.base, false)
			a.children(e.p("/a"), false)
			a.children(e.p("/missing"), false)
			a.children2(e.p("/missing"), false)
		}},
		scenario{"cversion-counts-creates-and-deletes", func(e *env) {
			a := e.session()
			a.create(e.p("/p"), nil, 0)
			for i := 0; i < 3; i++ {
				a.create(e.p("/p/c-"), nil, jute.FlagPersistentSequential)
			}
			a.del(e.p("/p/c-0000000000"), -1)
			a.children2(e.p("/p"), false)
			a.set(e.p("/p"), []byte("d"), -1)
			a.exists(e.p("/p"), false)
			a.create(e.p("/p/c-"), nil, jute.FlagPersistentSequential)
		}},
		scenario{"sync", func(e *env) {
			a := e.session()
			a.call(jute.OpSync, &jute.SyncRequest{Path: e.base})
			a.call(jute.OpSync, &jute.SyncRequest{Path: e.p("/missing")})
			a.call(jute.OpSync, &jute.SyncRequest{Path: "not a path"})
		}},
		scenario{"check-standalone", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.call(jute.OpCheck, &jute.CheckVersionRequest{Path: e.p("/n"), Version: 3})
			a.call(jute.OpCheck, &jute.CheckVersionRequest{Path: e.p("/missing"), Version: 0})
			a.call(jute.OpCheck, &jute.CheckVersionRequest{Path: "bad", Version: 0})
			// A successful check outside a multi gets no reply from
			// ZooKeeper 3.8 (it cannot serialise the null stat).
			xid, _ := a.Send(jute.OpCheck, &jute.CheckVersionRequest{Path: e.p("/n"), Version: 0})
			a.ping()
			_, _, err := a.Await(xid, nil, 300*time.Millisecond)
			e.logf("a: reply to successful check: %v", err != nil)
			a.ping()
		}},
		scenario{"get-ephemerals-and-children-number", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), nil, jute.FlagEphemeral)
			a.create(e.p("/p"), nil, 0)
			a.create(e.p("/p/y"), nil, jute.FlagEphemeral)
			a.create(e.p("/p/z"), nil, 0)
			a.create(e.p("/p/z/w"), nil, 0)
			a.call(jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: e.p("/p")})
			a.call(jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: e.base})
			a.call(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: e.p("/p")})
			a.call(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: e.p("/missing")})
		}},
		scenario{"delete-container-op", func(e *env) {
			a := e.session()
			a.create(e.p("/p"), nil, 0)
			a.create(e.p("/e"), nil, jute.FlagEphemeral)
			a.create(e.p("/full"), nil, 0)
			a.create(e.p("/full/c"), nil, 0)
			raw := func(p string) {
				xid, _ := a.Send(jute.OpDeleteContainer, rawBody(p))
				events, h, err := a.Await(xid, nil, 5*time.Second)
				a.logEvents(events)
				if err != nil {
					e.logf("a: deleteContainer %s -> %v", p, err)
					return
				}
				e.logf("a: deleteContainer %s -> %s zxid=%s", p, jute.Error(h.Err).Name(), e.zx(h.Zxid))
			}
			raw(e.p("/p"))
			raw(e.p("/e"))
			raw(e.p("/full"))
			raw(e.p("/missing"))
			raw("/zookeeper")
		}},
		scenario{"zxid-consumption", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.create(e.p("/n"), nil, 0)
			a.del(e.p("/zz"), -1)
			a.set(e.p("/zz"), nil, -1)
			a.setACL(e.p("/zz"), openACL, -1)
			a.get(e.p("/n"), false)
			a.exists(e.p("/zz"), false)
			a.call(jute.OpReconfig, &jute.ReconfigRequest{CurConfigID: -1})
			a.ping()
		}},
		scenario{"get-ephemerals-prefix-java-trim", func(e *env) {
			// ZooKeeper trims the prefix with Java's trim (every
			// character up to U+0020, nothing else) before testing for
			// "" or "/", and matches the untrimmed prefix otherwise.
			a := e.session()
			a.create(e.p("/e1"), nil, jute.FlagEphemeral)
			a.create(e.p("/p"), nil, 0)
			a.create(e.p("/p/e2"), nil, jute.FlagEphemeral)
			a.create(e.p("/\u00e9"), nil, jute.FlagEphemeral)
			for _, pre := range []string{e.p("/p"), e.p("/e"), " /\t", "\x01", "\x01/\x1f", "\u00a0", "\u0085/", e.p("/p") + "\x01",
				e.p("/\xc3"), e.p("/\u00e9")} {
				a.call(jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: pre})
			}
		}},
		scenario{"sync-path-as-java-string", func(e *env) {
			// ZooKeeper decodes request strings into Java Strings and
			// writes them back with its own encoder: sync echoes a
			// malformed sequence as U+FFFD (grouped as Java's decoder
			// groups them) and a character outside the BMP as two
			// encoded surrogates.
			a := e.session()
			for _, p := range []string{"/x\xff", "/\U0001F600", "/\xed\xa0\x80", "/\xe2\x82", "\xc0\xaf",
				"\x00", "\xe0\x80\x80", "\xe0\xa0", "\xe0\x80", "\xf0\x9f\x98", "\xf0\x9f\x98x", "\xf0\x80\x80\x80",
				"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80", "\xc2", "\xc2x", "\xe2\x82x", "\xf0\x9f",
				"\xf0\x9fx", "\xf5", "\xf5\x80", "\xed\xa0\x80\xed\xb0\x80", "a\x80b", "\xc1\xbf", "\xef\xbf\xbd", "\u0800",
				"\xee\x80\x80", "\xf4\x8f\xbf\xbf", "\xf0\x9f\x98\x80\x80", "\xe0\xa0\x80", "\xe1\x80", "\xe1\x80\x00"} {
				a.call(jute.OpSync, &jute.SyncRequest{Path: "/s" + p + "|"})
				a.call(jute.OpSync, &jute.SyncRequest{Path: "/t" + p})
			}
		}},
		scenario{"version-edges", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.set(e.p("/n"), nil, -2)
			a.set(e.p("/n"), nil, 1<<31-1)
			a.set(e.p("/n"), nil, -1<<31)
			a.del(e.p("/n"), -2)
			a.multi(opCheck(e.p("/n"), -2))
			a.multi(opCheck(e.p("/n"), 0), opSet(e.p("/n"), "a", 0), opCheck(e.p("/n"), 1), opSet(e.p("/n"), "b", 1), opDelete(e.p("/n"), 2))
			a.multi(opSet(e.p("/n"), "c", 2), opDelete(e.p("/n"), 2))
			a.exists(e.p("/n"), false)
			a.multi(opSet(e.p("/n"), "c", 2), opDelete(e.p("/n"), 3))
			a.exists(e.p("/n"), false)
		}},
		scenario{"null-paths-sync-and-watch-ops", func(e *env) {
			// sync echoes a null path as null, removeWatches finds no
			// watch; the other requests fail.
			// (ZooKeeper answers addWatch on a null path with OK, then
			// cannot close the connection: not tried.)
			a := e.session()
			raw := func(op int32, body string) {
				xid, _ := a.Send(op, rawBody(body))
				events, h, err := a.Await(xid, nil, 5*time.Second)
				a.logEvents(events)
				if err != nil {
					e.logf("a: null %s -> %v", jute.OpName(op), err)
					return
				}
				e.logf("a: null %s -> %s zxid=%s", jute.OpName(op), jute.Error(h.Err).Name(), e.zx(h.Zxid))
			}
			rawBodyOf := func(op int32, body string) {
				xid, _ := a.Send(op, rawBody(body))
				f, err := a.ReadFrame(5 * time.Second)
				if err != nil || len(f) < 16 {
					e.logf("a: null %s -> %v", jute.OpName(op), err)
					return
				}
				e.logf("a: null %s -> xid=%v err=%q body %q", jute.OpName(op), xid, f[12:16], f[16:])
			}
			rawBodyOf(jute.OpSync, "\xff\xff\xff\xff")
			raw(jute.OpAddWatch, "\xff\xff\xff\xff\x00\x00\x00\x07")
			for _, op := range []int32{jute.OpCheckWatches, jute.OpRemoveWatches, jute.OpGetAllChildrenNumber, jute.OpGetChildren2, jute.OpSetACL} {
				raw(op, "\xff\xff\xff\xff\x00\x00\x00\x01\x00\x00\x00\x00")
			}
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "", Type: jute.WatcherTypeAny})
			a.ping()
		}},
		scenario{"exists-and-counts-without-read", func(e *env) {
			a := e.session()
			a.createACL(e.p("/s"), []jute.ACL{acl(jute.PermAll, "digest", digestID("u", "p"))}, 0)
			w := e.connect("w", 30*time.Second)
			w.exists(e.p("/s"), true)
			w.children2(e.p("/s"), true)
			w.call(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: e.p("/s")})
			w.call(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: "/zookeeper"})
			w.call(jute.OpGetAllChildrenNumber, &jute.GetAllChildrenNumberRequest{Path: "/zookeeper/"})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/s"), Type: jute.WatcherTypeAny})
		}},
	)
}

// rawBody is a request body written as it is (deleteContainer's body is
// the bare path).
type rawBody string

func (r rawBody) MarshalJute(e *jute.Encoder) { e.Raw([]byte(r)) }
