package refserver_test

import (
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Scenarios on multi and multiRead.
func init() {
	register(
		scenario{"multi-success", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), []byte("x0"), 0)
			a.multi(
				opCreate(e.p("/a"), 0),
				jute.MultiOp{Type: jute.OpCreate2, Body: &jute.CreateRequest{Path: e.p("/b"), Data: []byte("b"), ACL: openACL}},
				opSet(e.p("/x"), "x1", 0),
				opCheck(e.p("/x"), 1),
				opDelete(e.p("/a"), 0),
			)
			a.children2(e.base, false)
			a.get(e.p("/x"), false)
		}},
		scenario{"multi-failure-middle", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), nil, 0)
			a.multi(opCreate(e.p("/a"), 0), opSet(e.p("/x"), "v", 7), opCreate(e.p("/b"), 0), opDelete(e.p("/x"), -1))
			a.children(e.base, false)
			a.exists(e.p("/x"), false)
		}},
		scenario{"multi-failure-first-and-last", func(e *env) {
			a := e.session()
			a.multi(opDelete(e.p("/missing"), -1), opCreate(e.p("/a"), 0))
			a.multi(opCreate(e.p("/a"), 0), opCreate(e.p("/b"), 0), opCreate(e.p("/a"), 0))
			a.multi(opCreate(e.p("/only"), 0), opCheck(e.p("/only"), 1))
			a.children(e.base, false)
		}},
		scenario{"multi-error-codes", func(e *env) {
			a := e.session()
			a.create(e.p("/full"), nil, 0)
			a.create(e.p("/full/c"), nil, 0)
			a.create(e.p("/eph"), nil, jute.FlagEphemeral)
			a.createACL(e.p("/ro"), []jute.ACL{acl(jute.PermRead, "world", "anyone")}, 0)
			a.multi(opDelete(e.p("/full"), -1))
			a.multi(opCreate(e.p("/eph/c"), 0))
			a.multi(opCreate(e.p("/ro/c"), 0))
			a.multi(opCreate(e.p("/bad/"), 0))
			a.multi(opCreate(e.p("/f"), 9))
			a.multi(jute.MultiOp{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: e.p("/noacl"), Flags: 0}})
			a.multi(opCheck(e.p("/missing"), -1))
			a.multi(opSet(e.p("/ro"), "x", -1))
			a.multi(opCheck(e.p("/full"), -1), opCheck(e.p("/full"), 0))
		}},
		scenario{"multi-sequential-and-nesting", func(e *env) {
			a := e.session()
			a.multi(
				opCreate(e.p("/p"), 0),
				opCreate(e.p("/p/s-"), jute.FlagPersistentSequential),
				opCreate(e.p("/p/s-"), jute.FlagPersistentSequential),
				opCreate(e.p("/p/e-"), jute.FlagEphemeralSequential),
			)
			a.children2(e.p("/p"), false)
			a.multi(opDelete(e.p("/p/s-0000000000"), -1), opDelete(e.p("/p/s-0000000001"), -1),
				opDelete(e.p("/p/e-0000000002"), -1), opDelete(e.p("/p"), -1))
			a.exists(e.p("/p"), false)
			a.multi(opCreate(e.p("/q"), 0), opDelete(e.p("/q"), -1), opCreate(e.p("/q"), 0), opSet(e.p("/q"), "d", 0))
			a.exists(e.p("/q"), false)
		}},
		scenario{"multi-ephemeral-owner", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			b.multi(opCreate(e.p("/e"), jute.FlagEphemeral), opCreate(e.p("/s-"), jute.FlagEphemeralSequential))
			a.exists(e.p("/e"), true)
			a.get(e.p("/s-0000000001"), false)
			b.call(jute.OpCloseSession, nil)
			b.expectClosed()
			a.events(1)
			a.children(e.base, false)
		}},
		scenario{"multi-rollback-sequence", func(e *env) {
			a := e.session()
			a.create(e.p("/p"), nil, 0)
			a.multi(opCreate(e.p("/p/s-"), jute.FlagPersistentSequential), opCreate(e.p("/p/s-"), jute.FlagPersistentSequential), opDelete(e.p("/nope"), -1))
			a.create(e.p("/p/s-"), nil, jute.FlagPersistentSequential)
			a.exists(e.p("/p"), false)
		}},
		scenario{"multi-empty-and-reads", func(e *env) {
			a := e.session()
			a.multi()
			a.create(e.p("/x"), []byte("d"), 0)
			a.multi(jute.MultiOp{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: e.p("/x")}})
			a.multi(opCreate(e.p("/y"), 0), jute.MultiOp{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: e.p("/x")}})
			a.exists(e.p("/y"), false)
			a.ping()
		}},
		scenario{"multi-container-ttl-results", func(e *env) {
			a := e.session()
			a.multi(
				jute.MultiOp{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: e.p("/box"), ACL: openACL, Flags: jute.FlagContainer}},
				jute.MultiOp{Type: jute.OpCreateTTL, Body: &jute.CreateTTLRequest{Path: e.p("/ttl"), ACL: openACL, Flags: jute.FlagPersistentWithTTL, TTL: 60000}},
				jute.MultiOp{Type: jute.OpCreateTTL, Body: &jute.CreateTTLRequest{Path: e.p("/plain"), ACL: openACL, Flags: 0, TTL: 60000}},
				jute.MultiOp{Type: jute.OpCreateContainer, Body: &jute.CreateRequest{Path: e.p("/box2"), ACL: openACL, Flags: 0}},
				opCreate(e.p("/box/c"), 0),
			)
			a.multi(jute.MultiOp{Type: jute.OpCreate, Body: &jute.CreateRequest{Path: e.p("/t2"), ACL: openACL, Flags: jute.FlagPersistentWithTTL}})
			a.exists(e.p("/t2"), false)
			a.ping()
		}},
		scenario{"multi-watches", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/x"), nil, 0)
			w.exists(e.p("/new"), true)
			w.get(e.p("/x"), true)
			w.children(e.base, true)
			a.multi(opCreate(e.p("/nope"), 0), opDelete(e.p("/missing"), -1))
			w.ping()
			a.multi(opCreate(e.p("/new"), 0), opSet(e.p("/x"), "1", -1), opDelete(e.p("/new"), -1))
			w.events(3)
			w.ping()
		}},
		scenario{"multi-watches-own-connection", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), nil, 0)
			a.get(e.p("/x"), true)
			a.exists(e.p("/y"), true)
			a.multi(opSet(e.p("/x"), "1", -1), opCreate(e.p("/y"), 0))
			a.ping()
		}},
		scenario{"multi-read", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), []byte("data"), 0)
			a.create(e.p("/x/c"), nil, 0)
			a.createACL(e.p("/secret"), []jute.ACL{acl(jute.PermAll, "digest", digestID("u", "p"))}, 0)
			a.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: e.p("/x"), Watch: true}},
				{Type: jute.OpGetChildren, Body: &jute.GetChildrenRequest{Path: e.p("/x")}},
				{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: e.p("/missing")}},
				{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: e.p("/secret")}},
			}})
			a.set(e.p("/x"), []byte("changed"), -1)
			a.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{opCreate(e.p("/y"), 0)}})
			a.exists(e.p("/y"), false)
		}},
		scenario{"multi-watches-persistent", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/r"), nil, 0)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/r"), Mode: jute.AddWatchPersistentRecursive})
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.base, Mode: jute.AddWatchPersistent})
			w.children(e.p("/r"), true)
			a.multi(opCreate(e.p("/r/a"), 0), opCreate(e.p("/r/a/b"), 0), opSet(e.p("/r/a"), "x", -1),
				opDelete(e.p("/r/a/b"), -1), opDelete(e.p("/r/a"), -1), opSet(e.p("/r"), "y", -1), opDelete(e.p("/r"), -1))
			w.events(7)
			w.ping()
		}},
		scenario{"multi-data-and-child-watch-delete", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			a.create(e.p("/n/c"), nil, 0)
			w.get(e.p("/n"), true)
			w.children(e.p("/n"), true)
			a.multi(opSet(e.p("/n"), "1", -1), opDelete(e.p("/n/c"), -1), opDelete(e.p("/n"), -1))
			w.events(2)
			w.ping()
			a.create(e.p("/m"), nil, 0)
			w.get(e.p("/m"), true)
			w.children(e.p("/m"), true)
			a.multi(opSet(e.p("/m"), "1", -1), opDelete(e.p("/m"), -1))
			w.events(2)
			w.ping()
		}},
		scenario{"multi-read-errors", func(e *env) {
			a := e.session()
			a.create(e.p("/x"), []byte("d"), 0)
			a.createACL(e.p("/secret"), []jute.ACL{acl(jute.PermAll, "digest", digestID("u", "p"))}, 0)
			a.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Type: jute.OpGetChildren, Body: &jute.GetChildrenRequest{Path: e.p("/missing")}},
				{Type: jute.OpGetChildren, Body: &jute.GetChildrenRequest{Path: e.p("/secret")}},
				{Type: jute.OpGetChildren, Body: &jute.GetChildrenRequest{Path: "bad"}},
				{Type: jute.OpGetData, Body: &jute.GetDataRequest{Path: e.p("/x/")}},
				{Type: jute.OpGetChildren, Body: &jute.GetChildrenRequest{Path: e.base}},
			}})
			a.call(jute.OpMultiRead, &jute.MultiRequest{})
			a.call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{opCheck(e.p("/x"), -1)}})
			a.ping()
		}},
		scenario{"multi-sequential-numbering", func(e *env) {
			a := e.session()
			a.create(e.p("/p"), nil, 0)
			a.create(e.p("/p/s-"), nil, jute.FlagPersistentSequential)
			a.multi(opCreate(e.p("/p/s-"), jute.FlagPersistentSequential), opDelete(e.p("/p/s-0000000000"), -1),
				opCreate(e.p("/p/s-"), jute.FlagEphemeralSequential), opCreate(e.p("/p/x"), 0), opCreate(e.p("/p/s-"), jute.FlagPersistentSequential))
			a.create(e.p("/p/s-0000000006"), nil, 0)
			a.create(e.p("/p/s-"), nil, jute.FlagPersistentSequential)
			a.create(e.p("/p/s-"), nil, jute.FlagPersistentSequential)
			a.children2(e.p("/p"), false)
		}},
	)
}
