package refserver

import (
	"encoding/binary"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readersIn counts the server's goroutines blocked reading a frame.
func readersIn() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "refserver.(*conn).readFrame(")
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A frame's declared length costs memory only as its bytes arrive: 40
// connections that each declare a 1 MB frame and send 100 bytes of it hold
// a few megabytes, not 40.
func TestDeclaredFrameCostsLittle(t *testing.T) {
	s := startTest(t, Config{})
	before := heapInUse()
	for range 40 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write(binary.BigEndian.AppendUint32(nil, 0xfffff))
		c.Write(make([]byte, 100))
	}
	waitFor(t, 10*time.Second, "40 connections reading their frame", func() bool { return readersIn() == 40 })
	if grown := heapInUse() - before; grown > 16<<20 {
		t.Errorf("40 declared 1 MB frames hold %d MB of heap", grown>>20)
	}
}
