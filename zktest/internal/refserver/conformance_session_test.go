package refserver_test

import (
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Scenarios on sessions: negotiation, reconnects, close and expiry.
func init() {
	register(
		scenario{"session-timeout-negotiation", func(e *env) {
			e.connect("a", 30*time.Second)
			e.connect("tiny", time.Millisecond)
			e.connect("zero", 0)
			e.connect("neg", -5*time.Second)
			e.connect("huge", time.Hour)
			e.connect("mid", 5*time.Second)
		}},
		scenario{"session-ping", func(e *env) {
			a := e.session()
			a.ping()
			a.create(e.p("/n"), nil, 0)
			a.ping()
			xid, _ := a.Send(jute.OpGetData, &jute.GetDataRequest{Path: e.p("/n")})
			a.ping()
			a.Await(xid, nil, 5*time.Second)
		}},
		scenario{"session-reconnect", func(e *env) {
			a := e.session()
			a.create(e.p("/e"), nil, jute.FlagEphemeral)
			a.exists(e.p("/e"), true)
			b := e.reconnect("a2", a.SessionID, a.Passwd, 10*time.Second, a.LastZxid)
			a.expectClosed()
			b.exists(e.p("/e"), false)
			b.create(e.p("/f"), nil, jute.FlagEphemeral)
			b.exists(e.p("/f"), false)
			b.del(e.p("/e"), -1)
			b.ping()
		}},
		scenario{"session-reconnect-bad-password", func(e *env) {
			a := e.session()
			bad := append([]byte(nil), a.Passwd...)
			bad[0] ^= 0xff
			b := e.reconnect("b", a.SessionID, bad, 10*time.Second, 0)
			b.expectClosed()
			a.expectClosed()
			c := e.reconnect("c", a.SessionID, a.Passwd, 10*time.Second, 0)
			c.exists(e.base, false)
		}},
		scenario{"session-reconnect-unknown", func(e *env) {
			e.session()
			b := e.reconnect("b", 0x7eadbeef12345678, make([]byte, 16), 10*time.Second, 0)
			b.expectClosed()
		}},
		scenario{"session-zxid-ahead", func(e *env) {
			a := e.session()
			b := e.reconnect("b", 0, nil, 10*time.Second, a.LastZxid+1000)
			b.expectClosed()
			c := e.reconnect("c", a.SessionID, a.Passwd, 10*time.Second, a.LastZxid+1)
			c.expectClosed()
			a.ping()
			d := e.reconnect("d", a.SessionID, a.Passwd, 10*time.Second, a.LastZxid)
			d.ping()
		}},
		scenario{"session-close", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			b.create(e.p("/e1"), nil, jute.FlagEphemeral)
			b.create(e.p("/p"), nil, 0)
			b.create(e.p("/p/e2"), nil, jute.FlagEphemeralSequential)
			a.exists(e.p("/e1"), true)
			a.children(e.p("/p"), true)
			b.get(e.p("/e1"), true)
			b.call(jute.OpCloseSession, nil)
			b.expectClosed()
			a.eventsUnordered(2)
			a.children2(e.p("/p"), false)
			a.exists(e.p("/e1"), false)
			r := e.reconnect("b2", b.SessionID, b.Passwd, 10*time.Second, 0)
			r.expectClosed()
		}},
		scenario{"session-expiry", func(e *env) {
			a := e.session()
			b := e.connect("b", 400*time.Millisecond)
			b.create(e.p("/e"), nil, jute.FlagEphemeral)
			b.create(e.p("/p"), nil, 0)
			b.create(e.p("/p/c"), nil, jute.FlagEphemeral)
			a.exists(e.p("/e"), true)
			a.children(e.p("/p"), true)
			// b stops pinging.
			a.eventsUnordered(2)
			a.children2(e.p("/p"), false)
			b.expectClosed()
			r := e.reconnect("b2", b.SessionID, b.Passwd, 10*time.Second, 0)
			r.expectClosed()
			a.ping()
		}},
		scenario{"create-session-on-open-connection", func(e *env) {
			a := e.session()
			a.SendXid(7, jute.OpCreateSession, nil)
			events, h, err := a.Await(7, nil, 5*time.Second)
			a.logEvents(events)
			e.logf("a: createSession without body -> %v %s zxid=%s", err, jute.Error(h.Err).Name(), e.zx(h.Zxid))
			a.SendXid(8, jute.OpCreateSession, rawBody("\x00\x00\x13\x88"))
			f, err := a.ReadFrame(5 * time.Second)
			if err != nil {
				e.logf("a: createSession -> %v", err)
			} else {
				var rsp jute.ConnectResponse
				jute.Decode(f, &rsp)
				e.logf("a: createSession -> connect response session=%s timeout=%d readOnly=%v", e.owner(rsp.SessionID), rsp.TimeOut, rsp.HasReadOnly)
			}
			a.ping()
		}},
		scenario{"session-ephemeral-owner-stat", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			b.create2(e.p("/mine"), nil, jute.FlagEphemeral)
			a.exists(e.p("/mine"), false)
			a.get(e.p("/mine"), false)
			a.call(jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: "/"})
			b.call(jute.OpGetEphemerals, &jute.GetEphemeralsRequest{PrefixPath: ""})
		}},
		scenario{"session-close-recursive-watch", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			b := e.connect("b", 30*time.Second)
			a.create(e.p("/p"), nil, 0)
			w.call(jute.OpAddWatch, &jute.AddWatchRequest{Path: e.p("/p"), Mode: jute.AddWatchPersistentRecursive})
			b.create(e.p("/p/e1"), nil, jute.FlagEphemeral)
			b.create(e.p("/p/e2"), nil, jute.FlagEphemeralSequential)
			w.events(2)
			b.call(jute.OpCloseSession, nil)
			b.expectClosed()
			w.eventsUnordered(2)
			w.children2(e.p("/p"), false)
		}},
		scenario{"session-close-event-order", func(e *env) {
			a := e.session()
			w := e.connect("w", 30*time.Second)
			b := e.connect("b", 30*time.Second)
			a.create(e.p("/p"), nil, 0)
			b.create(e.p("/p/e"), nil, jute.FlagEphemeral)
			w.children(e.p("/p"), true)
			w.get(e.p("/p/e"), true)
			w.exists(e.p("/p/e"), true)
			w.children(e.p("/p/e"), true)
			b.call(jute.OpCloseSession, nil)
			b.expectClosed()
			w.events(2)
			w.children2(e.p("/p"), false)
			w.ping()
		}},
	)
}
