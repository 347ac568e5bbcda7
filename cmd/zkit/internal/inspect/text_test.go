package inspect_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
)

// sample is a read/write lock with a Curator reader holding and a zkit
// writer waiting, read at a fixed time.
func sample() *inspect.Report {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &inspect.Report{
		Path: "/app/rw", Kind: inspect.RWLock, Stat: &client.Stat{}, At: at,
		Nodes: []inspect.Node{
			{Role: inspect.Holder, Name: "_c_0f-__READ__0000000000", Origin: inspect.Curator, Mode: "read",
				Session: 0x100000a, Token: 17, Created: at.Add(-90 * time.Second), Data: []byte("10.0.0.1")},
			{Role: inspect.Waiter, Name: "_c_1e-__WRIT__0000000001", Mode: "write",
				Session: 0x100000b, Token: 18, Created: at.Add(-1500 * time.Millisecond), Data: []byte("a\tb\x00")},
		},
		Notes: []string{"a note"},
	}
}

// The text is aligned, escapes data, and shows only the columns used.
func TestWriteText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := sample().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `path:      /app/rw
kind:      rwlock
sessions:  2

ROLE    NODE                      ORIGIN   MODE   SESSION    TOKEN  AGE    DATA
holder  _c_0f-__READ__0000000000  curator  read   0x100000a  17     1m30s  "10.0.0.1"
waiter  _c_1e-__WRIT__0000000001           write  0x100000b  18     1.5s   "a\tb\x00"
note: a note
`
	if b.String() != want {
		t.Fatalf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

// The JSON is one object: sessions in hex, ages in milliseconds.
func TestJSON(t *testing.T) {
	t.Parallel()
	out, err := json.Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path  string `json:"path"`
		Kind  string `json:"kind"`
		Nodes []struct {
			Role    string `json:"role"`
			Session string `json:"session"`
			Token   int64  `json:"token"`
			AgeMs   int64  `json:"age_ms"`
			Data    string `json:"data"`
			Origin  string `json:"origin"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Path != "/app/rw" || got.Kind != "rwlock" || len(got.Nodes) != 2 ||
		got.Nodes[0].Session != "0x100000a" || got.Nodes[0].AgeMs != 90000 || got.Nodes[0].Origin != "curator" ||
		got.Nodes[1].Role != "waiter" || got.Nodes[1].Token != 18 || got.Nodes[1].Data != "a\tb\x00" {
		t.Fatalf("json %s", out)
	}
}

// A discovery instance's service name comes from its node's data: a
// newline or an escape sequence in it is printed escaped, never raw into
// the table or the terminal; a plain name is printed as it is.
func TestWriteTextEscapesService(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &inspect.Report{Path: "/svc", Kind: inspect.Discovery, Stat: &client.Stat{}, At: at, Nodes: []inspect.Node{
		{Role: inspect.Instance, Name: "api/a-1", ID: "a-1", Service: "api", Created: at},
		{Role: inspect.Instance, Name: "api/a-2", ID: "a-2", Service: "api\nholder  x\x1b[2J", Created: at},
	}}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 6 || strings.Contains(b.String(), "\x1b") || !strings.Contains(lines[5], `"api\nholder  x\x1b[2J"`) ||
		!strings.Contains(lines[4], " api ") {
		t.Fatalf("text:\n%s", b.String())
	}
}
