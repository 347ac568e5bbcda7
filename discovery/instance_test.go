package discovery_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/discovery"
)

// Curator's JsonInstanceSerializer wrote these (5.4, in its default mode
// and with "enabled"), for an instance with a String payload and one with
// an object of its own class.
const (
	curatorCompat = `{"name":"api","id":"i1","address":"10.0.0.1","port":8080,"sslPort":null,"payload":"hello","registrationTimeUTC":1795473936262,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}`
	curatorFull   = `{"name":"api","id":"i2","address":null,"port":null,"sslPort":8443,"payload":{"@class":"T$Details","zone":"eu","weight":3},"registrationTimeUTC":1795473937078,"serviceType":"STATIC","uriSpec":null,"enabled":false}`
)

func TestDecodeCuratorJSON(t *testing.T) {
	var a discovery.Instance
	if err := json.Unmarshal([]byte(curatorCompat), &a); err != nil {
		t.Fatal(err)
	}
	want := discovery.Instance{Name: "api", ID: "i1", Address: "10.0.0.1", Port: 8080, Payload: json.RawMessage(`"hello"`),
		Registered: time.UnixMilli(1795473936262).UTC(), Type: discovery.Dynamic,
		URISpec: discovery.URISpec{{"scheme", true}, {"://", false}, {"address", true}, {":", false}, {"port", true}}}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("decoded\n%#v\nwant\n%#v", a, want)
	}
	if got := a.URI(nil); got != "http://10.0.0.1:8080" {
		t.Fatalf("URI = %q", got)
	}
	// Written back, it is what Curator wrote.
	if out, err := json.Marshal(a); err != nil || string(out) != curatorCompat {
		t.Fatalf("encoded\n%s (%v)\nwant\n%s", out, err, curatorCompat)
	}

	var b discovery.Instance
	if err := json.Unmarshal([]byte(curatorFull), &b); err != nil {
		t.Fatal(err)
	}
	if b.Address != "" || b.Port != 0 || b.SSLPort != 8443 || b.URISpec != nil || !b.Disabled || b.Type != discovery.Static {
		t.Fatalf("decoded %#v", b)
	}
	var details struct {
		Zone   string
		Weight int
	}
	if err := json.Unmarshal(b.Payload, &details); err != nil || details.Zone != "eu" || details.Weight != 3 {
		t.Fatalf("payload %s decodes to %+v, %v", b.Payload, details, err)
	}
	if got, want := b.URI(map[string]string{"x": "y"}), ""; got != want {
		t.Fatalf("URI without a spec = %q", got)
	}
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != curatorFull {
		t.Fatalf("encoded\n%s\nwant\n%s", out, curatorFull)
	}
}

// Members zkit does not know are kept, and written back; "enabled": true
// is the default and not written.
func TestUnknownMembersRoundTrip(t *testing.T) {
	in := `{"name":"api","id":"x","weight":{"a":[1,2]},"enabled":true,"zone":"eu","registrationTimeUTC":0}`
	var inst discovery.Instance
	if err := json.Unmarshal([]byte(in), &inst); err != nil {
		t.Fatal(err)
	}
	if inst.Disabled || len(inst.Extra) != 2 || string(inst.Extra["zone"]) != `"eu"` || string(inst.Extra["weight"]) != `{"a":[1,2]}` {
		t.Fatalf("decoded %#v", inst)
	}
	out, err := json.Marshal(inst)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"api","id":"x","address":null,"port":null,"sslPort":null,"payload":null,"registrationTimeUTC":0,"serviceType":"DYNAMIC","uriSpec":null,"weight":{"a":[1,2]},"zone":"eu"}`
	if string(out) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", out, want)
	}
	inst.Extra["name"] = json.RawMessage(`"shadow"`)
	if _, err := json.Marshal(inst); err == nil {
		t.Fatal("an extra member named like a known one was encoded")
	}
}

// Members zkit does not know keep their names when written back, whatever
// those names hold: a quote, a backslash, a control character. A name
// written as it is would make JSON that nobody reads, or one whose "id"
// is another.
func TestUnknownMemberNamesEscaped(t *testing.T) {
	in := `{"name":"api","id":"w","we\"ird":1,"back\\slash":2,"ctl\u0001":3,"<&>":4}`
	var inst discovery.Instance
	if err := json.Unmarshal([]byte(in), &inst); err != nil {
		t.Fatal(err)
	}
	inst.Extra["x\":0,\"id\":\"hijack\",\"y"] = json.RawMessage(`5`)
	out, err := inst.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back discovery.Instance
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("written back as %s: %v", out, err)
	}
	if back.ID != "w" || !reflect.DeepEqual(back.Extra, inst.Extra) {
		t.Fatalf("written back as %s, read as id %q extra %q", out, back.ID, back.Extra)
	}
	if !strings.Contains(string(out), `"<&>":4`) {
		t.Fatalf("written back as %s: the name <&> escaped, unlike Jackson", out)
	}
}

func TestDecodeRefusesWhatCuratorRefuses(t *testing.T) {
	for _, in := range []string{`null`, `[]`, `"x"`, `{"port":"eighty"}`, `{"name":3}`, `{"uriSpec":{"parts":3}}`, `{"enabled":"yes"}`, `{`} {
		var inst discovery.Instance
		if err := json.Unmarshal([]byte(in), &inst); err == nil {
			t.Errorf("%s decoded to %#v", in, inst)
		}
	}
}

func TestInstanceEqual(t *testing.T) {
	a := discovery.Instance{Name: "api", ID: "1", Payload: json.RawMessage(`{"a":1, "b":[true]}`), Registered: time.UnixMilli(5)}
	b := a
	b.Payload = json.RawMessage(`{"b":[true],"a":1}`)
	b.Path = "/elsewhere"
	b.Registered = time.UnixMilli(5).Add(300 * time.Microsecond)
	if !a.Equal(b) {
		t.Fatal("same instance, other spacing, order, path and sub-millisecond time: not Equal")
	}
	b.Port = 1
	if a.Equal(b) {
		t.Fatal("other port: Equal")
	}
}

func TestURISpec(t *testing.T) {
	inst := discovery.Instance{Name: "api", ID: "a-1", Address: "h", Port: 80, SSLPort: 443,
		Registered: time.UnixMilli(42), Type: discovery.Dynamic}
	cases := []struct{ spec, uri string }{
		{"{scheme}://{address}:{ssl-port}/{name}/{id}", "https://h:443/api/a-1"},
		{"{ scheme }://{address}:{port}", "https://h:80"},
		{"t={registration-time-utc} {service-type} {[}x{]} {unknown}.", "t=42 dynamic {x} ."},
		{"plain", "plain"},
		{"", ""},
	}
	for _, tc := range cases {
		spec, err := discovery.ParseURISpec(tc.spec)
		if err != nil {
			t.Fatalf("ParseURISpec(%q): %v", tc.spec, err)
		}
		inst.URISpec = spec
		if got := inst.URI(map[string]string{"name": "override"}); got != strings.ReplaceAll(tc.uri, "/api/", "/override/") {
			t.Errorf("%q with name overridden: URI = %q", tc.spec, got)
		}
		if got := inst.URI(nil); got != tc.uri {
			t.Errorf("%q: URI = %q, want %q", tc.spec, got, tc.uri)
		}
	}
	spec, _ := discovery.ParseURISpec("{scheme}://{address}")
	if spec.String() != "{scheme}://{address}" {
		t.Fatalf("String = %q", spec.String())
	}
	inst.SSLPort, inst.Port = 0, 0
	inst.URISpec, _ = discovery.ParseURISpec("{scheme}://{address}:{port}")
	if got := inst.URI(nil); got != "http://h:" {
		t.Fatalf("without ports: %q", got)
	}
	for _, bad := range []string{"{a{b}}", "a}", "{open"} {
		if _, err := discovery.ParseURISpec(bad); err == nil {
			t.Errorf("ParseURISpec(%q) accepted", bad)
		}
	}
}

func TestJavaPayload(t *testing.T) {
	p, err := discovery.JavaPayload("com.example.Details", struct {
		Zone string `json:"zone"`
	}{"eu"})
	if err != nil || string(p) != `{"@class":"com.example.Details","zone":"eu"}` {
		t.Fatalf("JavaPayload = %s, %v", p, err)
	}
	if p, err := discovery.JavaPayload("java.util.HashMap", map[string]int{}); err != nil || string(p) != `{"@class":"java.util.HashMap"}` {
		t.Fatalf("empty map: %s, %v", p, err)
	}
	for _, v := range []any{"text", 3, []int{1}, map[string]int{"@class": 1}} {
		if _, err := discovery.JavaPayload("C", v); err == nil {
			t.Errorf("JavaPayload of %#v accepted", v)
		}
	}
	if _, err := discovery.JavaPayload("", map[string]int{}); err == nil {
		t.Error("JavaPayload without a class accepted")
	}
}

// Like Jackson, zkit writes "&", "<" and ">" as they are: a URI's query
// is stored as Curator would store it.
func TestMarshalLeavesHTMLAlone(t *testing.T) {
	spec, _ := discovery.ParseURISpec("http://{address}/x?a&b<c>")
	out, err := discovery.Instance{Name: "api", ID: "x", URISpec: spec}.MarshalJSON()
	if err != nil || !strings.Contains(string(out), `"/x?a&b<c>"`) {
		t.Fatalf("MarshalJSON = %s, %v", out, err)
	}
}
