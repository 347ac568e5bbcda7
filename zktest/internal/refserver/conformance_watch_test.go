package refserver_test

import (
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Scenarios on watches: which ops fire which watches, and event order.
func init() {
	register(
		scenario{"watch-created", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			w.exists(e.p("/n"), true)
			w.children(e.base, true)
			a.create(e.p("/n"), nil, 0)
			w.events(2)
			a.create(e.p("/m"), nil, 0)
			w.ping()
		}},
		// The reply header of a watch event: ZooKeeper 3.8 sends -1 for
		// its zxid (3.9 the zxid of the transaction that fired it).
		scenario{"watch-event-zxid", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			w.exists(e.p("/n"), true)
			w.children(e.base, true)
			a.create(e.p("/n"), nil, 0)
			w.eventZxids(2)
			w.get(e.p("/n"), true)
			a.set(e.p("/n"), []byte("1"), -1)
			w.eventZxids(1)
			w.exists(e.p("/n"), true)
			a.del(e.p("/n"), -1)
			w.eventZxids(1)
		}},
		scenario{"watch-root-children", func(e *env) {
			w := e.connect("w", 30*time.Second)
			// Not logged: the root's children depend on the earlier
			// scenarios.
			w.Call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "/", Watch: true}, nil)
			w.Call(jute.OpGetChildren, &jute.GetChildrenRequest{Path: "", Watch: true}, nil)
			a := e.session()
			w.events(1)
			a.del(e.base, -1)
			w.ping()
		}},
		scenario{"watch-events-before-reply", func(e *env) {
			a := e.session()
			a.exists(e.p("/n"), true)
			a.children(e.base, true)
			a.create(e.p("/n"), nil, 0)
			a.get(e.p("/n"), true)
			a.set(e.p("/n"), []byte("1"), -1)
			a.get(e.p("/n"), true)
			a.children(e.p("/n"), true)
			a.children(e.base, true)
			a.del(e.p("/n"), -1)
		}},
		scenario{"watch-deleted-dedup", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			w.get(e.p("/n"), true)
			w.exists(e.p("/n"), true)
			w.children(e.p("/n"), true)
			w.children(e.base, true)
			w.get(e.p("/n"), true)
			a.del(e.p("/n"), -1)
			w.events(2)
			w.ping()
		}},
		scenario{"watch-child-only-delete", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			w.children(e.p("/n"), true)
			a.del(e.p("/n"), -1)
			w.events(1)
			w.ping()
		}},
		scenario{"watch-data-one-shot", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			w.get(e.p("/n"), true)
			a.set(e.p("/n"), []byte("1"), -1)
			w.events(1)
			a.set(e.p("/n"), []byte("2"), -1)
			w.ping()
			w.exists(e.p("/n"), true)
			a.set(e.p("/n"), []byte("3"), -1)
			w.events(1)
		}},
		scenario{"watch-children", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/p"), nil, 0)
			w.children2(e.p("/p"), true)
			a.create(e.p("/p/a"), nil, 0)
			w.events(1)
			w.children(e.p("/p"), true)
			a.set(e.p("/p"), []byte("x"), -1)
			a.set(e.p("/p/a"), []byte("x"), -1)
			w.ping()
			a.del(e.p("/p/a"), -1)
			w.events(1)
		}},
		scenario{"watch-nonode-getdata-sets-nothing", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			w.get(e.p("/n"), true)
			w.children(e.p("/n"), true)
			a.create(e.p("/n"), nil, 0)
			w.ping()
			w.exists(e.p("/m"), true)
			a.create(e.p("/m"), nil, 0)
			w.events(1)
		}},
		scenario{"watch-multiple-connections", func(e *env) {
			a := e.session()
			w1 := e.connect("w1", 30*time.Second)
			w2 := e.connect("w2", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			w1.get(e.p("/n"), true)
			w2.get(e.p("/n"), true)
			w2.exists(e.p("/n"), true)
			a.set(e.p("/n"), []byte("x"), -1)
			w1.events(1)
			w2.events(1)
			w1.ping()
			w2.ping()
		}},
		scenario{"watch-persistent", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/n"), Mode: jute.AddWatchPersistent})
			a.create(e.p("/n"), nil, 0)
			a.set(e.p("/n"), []byte("1"), -1)
			a.create(e.p("/n/c"), nil, 0)
			a.create(e.p("/n/c/d"), nil, 0)
			a.del(e.p("/n/c/d"), -1)
			a.del(e.p("/n/c"), -1)
			a.del(e.p("/n"), -1)
			w.events(5)
			w.ping()
		}},
		scenario{"watch-persistent-recursive", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/r"), Mode: jute.AddWatchPersistentRecursive})
			a.create(e.p("/r"), nil, 0)
			a.create(e.p("/r/c"), nil, 0)
			a.create(e.p("/r/c/d"), nil, 0)
			a.set(e.p("/r/c/d"), []byte("1"), -1)
			a.del(e.p("/r/c/d"), -1)
			w.events(5)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/r"), Mode: 7})
			w.ping()
		}},
		scenario{"watch-remove-and-check", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.get(e.p("/n"), true)
			a.children(e.p("/n"), true)
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeData})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeData})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/other"), Type: jute.WatcherTypeAny})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeAny})
			a.set(e.p("/n"), []byte("x"), -1)
			a.create(e.p("/n/c"), nil, 0)
			a.ping()
		}},
		scenario{"watch-check-any-connection", func(e *env) {
			// ZooKeeper 3.8's checkWatches asks whether the path has a
			// watch of the type at all, not whether this connection set
			// one; removeWatches does look for the connection's own.
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			a.get(e.p("/n"), true)
			a.children(e.p("/n"), true)
			a.exists(e.p("/missing"), true)
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeData})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeChildren})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeAny})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/missing"), Type: jute.WatcherTypeAny})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/missing"), Type: jute.WatcherTypeChildren})
			w.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeAny})
			a.set(e.p("/n"), []byte("x"), -1)
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeData})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeChildren})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/missing"), Type: jute.WatcherTypeData})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/missing"), Type: jute.WatcherTypeAny})
		}},
		scenario{"watch-check-under-recursive", func(e *env) {
			// A persistent recursive watch fires for the paths below
			// it, but checkWatches on them finds no watch.
			a := e.session()
			a.create(e.p("/r"), nil, 0)
			a.create(e.p("/r/x"), nil, 0)
			a.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/r"), Mode: jute.AddWatchPersistentRecursive})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeChildren})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r/x"), Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r/x"), Type: jute.WatcherTypeAny})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r/x/y"), Type: jute.WatcherTypeAny})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/r/x"), Type: jute.WatcherTypeAny})
			a.set(e.p("/r/x"), []byte("1"), -1)
			a.ping()
		}},
		scenario{"set-watches", func(e *env) {
			a := e.session()
			a.create(e.p("/changed"), nil, 0)
			a.create(e.p("/same"), nil, 0)
			a.create(e.p("/gone"), nil, 0)
			a.create(e.p("/kids"), nil, 0)
			a.create(e.p("/quiet"), nil, 0)
			a.ping()
			rel := a.LastZxid
			a.set(e.p("/changed"), []byte("x"), -1)
			a.del(e.p("/gone"), -1)
			a.create(e.p("/born"), nil, 0)
			a.create(e.p("/kids/k"), nil, 0)
			w := e.connect("w", 30*time.Second)
			w.call(jute.OpSetWatches, &jute.SetWatches{
				RelativeZxid: rel,
				DataWatches:  []string{e.p("/changed"), e.p("/same"), e.p("/gone")},
				ExistWatches: []string{e.p("/born"), e.p("/unborn")},
				ChildWatches: []string{e.p("/kids"), e.p("/quiet"), e.p("/gone")},
			})
			a.set(e.p("/same"), []byte("y"), -1)
			a.create(e.p("/unborn"), nil, 0)
			a.create(e.p("/quiet/q"), nil, 0)
			w.events(3)
			w.ping()
		}},
		scenario{"set-watches2", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			w := e.connect("w", 30*time.Second)
			w.call(jute.OpSetWatches2, &jute.SetWatches2{
				RelativeZxid:               a.LastZxid,
				DataWatches:                []string{e.p("/n")},
				ExistWatches:               []string{},
				ChildWatches:               []string{},
				PersistentWatches:          []string{e.p("/p")},
				PersistentRecursiveWatches: []string{e.p("/r")},
			})
			a.set(e.p("/n"), []byte("1"), -1)
			a.create(e.p("/p"), nil, 0)
			a.create(e.p("/r"), nil, 0)
			a.create(e.p("/r/x"), nil, 0)
			w.events(4)
			w.ping()
			// A null list fails where ZooKeeper meets it, after the
			// lists before it took effect.
			w.call(jute.OpSetWatches2, &jute.SetWatches2{RelativeZxid: a.LastZxid, DataWatches: []string{e.p("/n")}})
			a.set(e.p("/n"), []byte("2"), -1)
			w.events(1)
			w.call(jute.OpSetWatches, &jute.SetWatches{RelativeZxid: a.LastZxid})
			w.ping()
		}},
		scenario{"set-watches-path-as-java-string", func(e *env) {
			a := e.session()
			a.call(jute.OpSetWatches, &jute.SetWatches{RelativeZxid: a.LastZxid,
				DataWatches: []string{e.p("/\xff")}, ExistWatches: []string{}, ChildWatches: []string{e.p("/\U0001F600")}})
		}},
		scenario{"watch-modes-same-path-last-wins", func(e *env) {
			// A connection has one mode per path in each watch table:
			// the last getData/exists/getChildren/addWatch replaces the
			// earlier one.
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/n"), nil, 0)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/n"), Mode: jute.AddWatchPersistent})
			w.get(e.p("/n"), true)
			w.children(e.p("/n"), true)
			a.set(e.p("/n"), []byte("1"), -1)
			a.create(e.p("/n/c"), nil, 0)
			w.events(2)
			a.set(e.p("/n"), []byte("2"), -1)
			a.del(e.p("/n/c"), -1)
			w.ping()
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/n"), Mode: jute.AddWatchPersistentRecursive})
			w.exists(e.p("/n"), true)
			a.create(e.p("/n/d"), nil, 0)
			a.set(e.p("/n"), []byte("3"), -1)
			a.set(e.p("/n"), []byte("4"), -1)
			w.events(1)
			w.ping()
		}},
		scenario{"watch-remove-persistent-types", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/n"), Mode: jute.AddWatchPersistent})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/n"), Type: 4})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: 5})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: 0})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeChildren})
			a.create(e.p("/n/c"), nil, 0)
			a.set(e.p("/n"), []byte("1"), -1)
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/n"), Type: jute.WatcherTypeData})
			a.set(e.p("/n"), []byte("2"), -1)
			a.ping()
		}},
		scenario{"set-watches-relative-zxid", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			a.create(e.p("/n/c"), nil, 0)
			w := e.connect("w", 30*time.Second)
			w.call(jute.OpSetWatches, &jute.SetWatches{RelativeZxid: a.LastZxid + 100,
				DataWatches: []string{e.p("/n")}, ExistWatches: []string{e.p("/n/c")}, ChildWatches: []string{e.p("/n")}})
			w.call(jute.OpSetWatches, &jute.SetWatches{RelativeZxid: 0,
				DataWatches: []string{e.p("/n/c"), "/zookeeper", "/zookeeper/config"}, ExistWatches: []string{e.p("/none")}, ChildWatches: []string{e.p("/n/c"), "/zookeeper/quota"}})
			w.call(jute.OpSetWatches, &jute.SetWatches{RelativeZxid: -5,
				DataWatches: []string{"/zookeeper"}, ExistWatches: []string{}, ChildWatches: []string{"/zookeeper"}})
			a.set(e.p("/n"), []byte("1"), -1)
			w.events(1)
			a.create(e.p("/n/d"), nil, 0)
			w.events(1)
			a.create(e.p("/none"), nil, 0)
			w.events(1)
			w.ping()
		}},
		scenario{"watch-check-odd-paths", func(e *env) {
			// checkWatches walks up from the path: "" has no watch, and
			// a path it cannot cut at a '/' fails the request (with a
			// persistent recursive watch anywhere, it walks to the
			// root). removeWatches does not walk.
			a := e.session()
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "b", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "b", Type: jute.WatcherTypeChildren})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "", Type: jute.WatcherTypeAny})
			a.Call(jute.OpExists, &jute.ExistsRequest{Path: "", Watch: true}, nil) // the root: not logged
			a.exists("c", true)
			a.exists("g/h", true)
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "c", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "g/h", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "i/j", Type: jute.WatcherTypeData})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "c", Type: jute.WatcherTypeAny})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "", Type: jute.WatcherTypeData})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "x", Type: 9})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "x", Type: 9})
			a.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/r"), Mode: jute.AddWatchPersistentRecursive})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "d", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "g/h", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "g/h", Type: jute.WatcherTypeAny})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: "i/j", Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r/x"), Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeAny})
			a.ping()
		}},
		scenario{"watch-add-odd-paths-and-java-string-keys", func(e *env) {
			// addWatch takes any path; watch paths are keyed as Java
			// Strings, so malformed sequences that decode alike name
			// the same watch.
			a := e.session()
			for _, p := range []string{"a", "", e.p("/x/"), e.p("//y"), "/"} {
				a.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: p, Mode: jute.AddWatchPersistent})
				a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: p, Type: jute.WatcherTypeAny})
			}
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: "/", Type: jute.WatcherTypeAny})
			a.exists(e.p("/\xfe"), true)
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/\xff"), Type: jute.WatcherTypeData})
			a.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/\xed\xa0\x80"), Type: jute.WatcherTypeData})
			a.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/\xff"), Type: jute.WatcherTypeData})
		}},
		scenario{"watch-recursive-remove-one-type", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			a.create(e.p("/r"), nil, 0)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/r"), Mode: jute.AddWatchPersistentRecursive})
			w.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeChildren})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeChildren})
			a.create(e.p("/r/c"), nil, 0)
			w.events(1)
			w.call(jute.OpRemoveWatches, &jute.RemoveWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeData})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/r"), Type: jute.WatcherTypeAny})
			a.create(e.p("/r/d"), nil, 0)
			w.ping()
		}},
		scenario{"set-watches2-persistent-java-string", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			w := e.connect("w", 30*time.Second)
			w.call(jute.OpSetWatches2, &jute.SetWatches2{RelativeZxid: a.LastZxid,
				DataWatches: []string{}, ExistWatches: []string{e.p("/n")}, ChildWatches: []string{},
				PersistentWatches: []string{e.p("/\xff"), e.p("/n")}, PersistentRecursiveWatches: []string{e.base}})
			w.call(jute.OpCheckWatches, &jute.CheckWatchesRequest{Path: e.p("/\xfe"), Type: jute.WatcherTypeAny})
			a.create(e.p("/n/c"), nil, 0)
			w.events(2)
			w.ping()
		}},
	)
}
