package refserver_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
	"github.com/zkit-dev/zkit/zktest"
	"github.com/zkit-dev/zkit/zktest/internal/refserver"
)

// Scenarios on the protocol itself: unknown opcodes, malformed and
// oversized frames, four-letter words.
func init() {
	register(
		scenario{"unknown-opcode", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			for _, op := range []int32{55, 0, jute.OpSASL, -3, 1000} {
				c := e.connect("c", 30*time.Second)
				c.SendXid(41, op, nil)
				c.expectClosed()
			}
			b.SendXid(42, 10, nil)
			b.expectClosed()
			d := e.connect("d", 30*time.Second)
			d.SendXid(43, jute.OpSASL, rawBody("\x00\x00\x00\x02hi"))
			events, h, err := d.Await(43, nil, 5*time.Second)
			d.logEvents(events)
			e.logf("d: sasl -> %v %s zxid=%s", err, jute.Error(h.Err).Name(), e.zx(h.Zxid))
			d.ping()
			a.ping()
		}},
		scenario{"malformed-bodies", func(e *env) {
			a := e.session()
			a.create(e.p("/n"), nil, 0)
			for _, op := range []int32{jute.OpCreate, jute.OpCreate2, jute.OpDelete, jute.OpSetData, jute.OpSetACL,
				jute.OpMulti, jute.OpGetData, jute.OpExists, jute.OpGetChildren, jute.OpGetChildren2, jute.OpGetACL,
				jute.OpSync, jute.OpSetWatches, jute.OpCheck, jute.OpCreateTTL} {
				a.SendXid(100+op, op, rawBody("\x00\x00"))
				events, h, err := a.Await(100+op, nil, 5*time.Second)
				a.logEvents(events)
				if err != nil {
					e.logf("a: truncated %s -> %v", jute.OpName(op), err)
					a.lost = true
					return
				}
				e.logf("a: truncated %s -> %s zxid=%s", jute.OpName(op), jute.Error(h.Err).Name(), e.zx(h.Zxid))
			}
			a.call(jute.OpMulti, rawBody("\x00\x00\x00\x63\x00\xff\xff\xff\xff"))
			a.ping()
		}},
		scenario{"short-header", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			b.WriteRaw([]byte{0, 0, 0, 4, 0, 0, 0, 1})
			b.expectClosed()
			a.ping()
		}},
		scenario{"oversize-frame", func(e *env) {
			a := e.session()
			b := e.connect("b", 30*time.Second)
			a.create(e.p("/big"), nil, 0)
			// The largest frame ZooKeeper reads is jute.maxbuffer
			// (0xfffff) bytes: header 8, path 4+len, data 4+len,
			// version 4.
			fit := 0xfffff - 8 - (4 + len(e.p("/big"))) - 4 - 4
			big := make([]byte, fit+1)
			b.call(jute.OpSetData, &jute.SetDataRequest{Path: e.p("/big"), Data: big[:fit], Version: -1})
			b.get(e.p("/big"), false)
			b.call(jute.OpSetData, &jute.SetDataRequest{Path: e.p("/big"), Data: big, Version: -1})
			b.expectClosed()
			c := e.connect("c", 30*time.Second)
			hdr := make([]byte, 4)
			binary.BigEndian.PutUint32(hdr, 0x7fffffff)
			c.WriteRaw(hdr)
			c.expectClosed()
			d := e.connect("d", 30*time.Second)
			binary.BigEndian.PutUint32(hdr, 0xfffffff0)
			d.WriteRaw(hdr)
			d.expectClosed()
			a.exists(e.p("/big"), false)
		}},
		scenario{"malformed-connect", func(e *env) {
			a := e.session()
			b := e.dial("b")
			b.WriteRaw([]byte{0, 0, 0, 3, 1, 2, 3})
			b.expectClosed()
			c := e.dial("c")
			req := jute.Frame(&jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}) // no readOnly
			c.WriteRaw(req)
			f, err := c.ReadFrame(5 * time.Second)
			if err != nil {
				e.logf("c: old-style connect -> %v", err)
			} else {
				var rsp jute.ConnectResponse
				jute.Decode(f, &rsp)
				e.sess[rsp.SessionID] = "c"
				c.SessionID, c.Passwd = rsp.SessionID, rsp.Passwd
				e.logf("c: old-style connect -> %d bytes timeout=%d hasReadOnly=%v", len(f), rsp.TimeOut, rsp.HasReadOnly)
			}
			a.ping()
		}},
		scenario{"four-letter-words", func(e *env) {
			a := e.session()
			for _, cmd := range []string{"ruok", "isro"} {
				e.logf("4lw %s: %q", cmd, fourLetter(e.tg.addr, cmd))
			}
			out := fourLetter(e.tg.addr, "srvr")
			e.logf("4lw srvr has Mode standalone: %v", containsLine(out, "Mode: standalone"))
			out = fourLetter(e.tg.addr, "mntr")
			e.logf("4lw mntr has server_state standalone: %v", containsLine(out, "zk_server_state\tstandalone"))
			e.logf("4lw xxxx: %q", fourLetter(e.tg.addr, "xxxx"))
			a.ping()
		}},
		scenario{"four-letter-words-status", func(e *env) {
			// What an ensemble's status reads of each server (srvr,
			// mntr): mode, zxid, outstanding requests, connections (the
			// four-letter word's own included), watches and version.
			a := e.session()
			b := e.connect("b", 30*time.Second)
			a.get(e.base, true)
			a.children(e.base, true)
			b.exists(e.p("/none"), true)
			b.create(e.p("/x"), nil, 0)
			a.events(1)
			a.get(e.base, true)
			srvr := fourLetter(e.tg.addr, "srvr")
			for _, name := range []string{"Zxid", "Outstanding", "Connections", "Mode"} {
				v := fourLetterField(srvr, name+":")
				if z, ok := strings.CutPrefix(v, "0x"); ok {
					n, _ := strconv.ParseInt(z, 16, 64)
					v = e.zx(n)
				}
				e.logf("4lw srvr %s: %s", name, v)
			}
			e.logf("4lw srvr Latency min/avg/max is three numbers: %v", len(strings.Split(fourLetterField(srvr, "Latency min/avg/max:"), "/")) == 3)
			e.logf("4lw srvr Zookeeper version is 3.8: %v", strings.HasPrefix(fourLetterField(srvr, "Zookeeper version:"), "3.8."))
			mntr := fourLetter(e.tg.addr, "mntr")
			for _, name := range []string{"zk_server_state", "zk_outstanding_requests", "zk_num_alive_connections", "zk_watch_count"} {
				e.logf("4lw mntr %s: %s", name, fourLetterField(mntr, name))
			}
			e.logf("4lw mntr zk_version is 3.8: %v", strings.HasPrefix(fourLetterField(mntr, "zk_version"), "3.8."))
			e.logf("4lw wchs: %q", fourLetter(e.tg.addr, "wchs"))
		}},
		scenario{"cons-last-cxid-and-zxid", func(e *env) {
			// A connection's last cxid counts only xids of 0 and up (a
			// request of a negative xid leaves it); its last zxid is its
			// own last reply's, not the server's.
			a := e.session()
			b := e.connect("b", 30*time.Second)
			a.get(e.base, false)
			if err := a.SendXid(-16, jute.OpGetData, &jute.GetDataRequest{Path: e.base}); err != nil {
				e.fatal("a: send: %v", err)
			}
			if _, h, err := a.Await(-16, nil, wireclient.DefaultWait); err != nil {
				e.fatal("a: xid -16: %v", err)
			} else {
				e.logf("a: getData xid=-16 -> %s zxid=%s", jute.Error(h.Err).Name(), e.zx(h.Zxid))
			}
			b.create(e.p("/later"), nil, 0)
			for _, f := range consFields(fourLetter(e.tg.addr, "cons"), a.SessionID, "lcxid", "lop", "lzxid") {
				if strings.HasPrefix(f, "lzxid=0x") {
					z, _ := strconv.ParseInt(f[len("lzxid=0x"):], 16, 64)
					f = "lzxid=" + e.zx(z)
				}
				e.logf("4lw cons a: %s", f)
			}
		}},
	)
}

// fourLetter sends a four-letter word and returns the whole answer.
func fourLetter(addr, cmd string) string {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte(cmd))
	b, _ := io.ReadAll(c)
	return string(b)
}

// fourLetterField is the value of the line of a four-letter word's output
// that starts with name ("Mode:" in srvr, "zk_watch_count" in mntr).
func fourLetterField(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			return strings.TrimSpace(v)
		}
	}
	return "(none)"
}

func containsLine(text, line string) bool {
	for len(text) > 0 {
		i := 0
		for i < len(text) && text[i] != '\n' {
			i++
		}
		if text[:i] == line {
			return true
		}
		if i == len(text) {
			break
		}
		text = text[i+1:]
	}
	return false
}

// reconfigScenario sends reconfig requests: a standalone ZooKeeper answers
// ReconfigDisabled by default, and Unimplemented with reconfigEnabled=true
// (it cannot change a standalone server's membership).
var reconfigScenario = scenario{"reconfig", func(e *env) {
	a := e.session()
	a.call(jute.OpReconfig, &jute.ReconfigRequest{CurConfigID: -1})
	a.call(jute.OpReconfig, &jute.ReconfigRequest{JoiningServers: "server.2=127.0.0.1:1:2;3", CurConfigID: -1})
	a.call(jute.OpReconfig, &jute.ReconfigRequest{NewMembers: "server.1=127.0.0.1:1:2;3", CurConfigID: 5})
	a.call(jute.OpReconfig, raw(null{}, null{}, null{}, int64(-1)))
	a.call(jute.OpReconfig, rawBody("\x00\x00"))
	a.get("/zookeeper/config", false)
	a.create(e.p("/after"), nil, 0)
	a.ping()
}}

func init() { register(reconfigScenario) }

// TestConformanceReconfigEnabled runs the reconfig scenario on a ZooKeeper
// with reconfigEnabled=true and on a reference server with
// Config.ReconfigEnabled.
func TestConformanceReconfigEnabled(t *testing.T) {
	zk := zktest.StartZooKeeper(t, append(zkOptions, zktest.WithConfig("reconfigEnabled", "true"))...)
	cfg := refConfig()
	cfg.ReconfigEnabled = true
	ref, err := refserver.Start("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	want := runScenario(t, target{"zookeeper", zk.Servers()[0]}, reconfigScenario)
	got := runScenario(t, target{"refserver", ref.Addr()}, reconfigScenario)
	if d := diffTranscripts(want, got); d != "" {
		t.Errorf("reference server differs from ZooKeeper:\n%s", d)
	}
	t.Logf("ZooKeeper with reconfigEnabled:\n%s", strings.Join(want, "\n"))
}

// consFields returns the fields named of session's line in cons output,
// "name=value" each, in the order asked.
func consFields(out string, session int64, names ...string) []string {
	sid := fmt.Sprintf("sid=0x%x,", session)
	var fields []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, sid) {
			continue
		}
		line = strings.TrimSuffix(strings.TrimSpace(line), ")")
		for _, name := range names {
			for _, f := range strings.Split(line, ",") {
				if strings.HasPrefix(f, name+"=") {
					fields = append(fields, f)
				}
			}
		}
	}
	return fields
}
