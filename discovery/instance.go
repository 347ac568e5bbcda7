package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// ServiceType is how an instance's node lives, as Curator's ServiceType
// names it.
type ServiceType string

// The service types of Curator's ServiceInstance. Register keeps Dynamic
// instances only; the others, which Curator writes as persistent (Static,
// Permanent) or ephemeral sequential (DynamicSequential) nodes, are read
// like any instance.
const (
	// Dynamic: an ephemeral node named after the instance's id, gone with
	// its session. The default.
	Dynamic ServiceType = "DYNAMIC"
	// Static: a persistent node, registered by hand.
	Static ServiceType = "STATIC"
	// Permanent: a persistent node that outlives its registrar.
	Permanent ServiceType = "PERMANENT"
	// DynamicSequential: an ephemeral sequential node whose name is the
	// id followed by the server's sequence number.
	DynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL"
)

// Instance is one instance of a service: the JSON ServiceInstance that
// Curator's JsonInstanceSerializer writes as the data of
// "<base>/<service>/<id>". Its JSON form (MarshalJSON, UnmarshalJSON) is
// Curator's, so that Go and Java processes read each other's instances.
//
// Fields a Go program may leave empty map to Curator's nulls: an empty
// Address, a zero Port or SSLPort, a nil Payload, a nil URISpec are
// written as null, and null is read back as them. A zero Registered is
// 0 in JSON.
type Instance struct {
	// Name is the service's name: the node's parent is "<base>/<Name>".
	Name string
	// ID is the instance's id, unique within the service: its node's name
	// (for DynamicSequential instances, the name without the sequence
	// number).
	ID string
	// Address is the host the instance serves on ("address").
	Address string
	// Port and SSLPort are its ports ("port", "sslPort"); 0 is none.
	Port    int
	SSLPort int
	// Payload is the instance's payload as JSON, exactly as stored. Curator
	// reads it with Jackson's class type information: a payload that a
	// Java service reads as an object of its own class must carry that
	// class's name in an "@class" member (see JavaPayload). Strings and
	// numbers carry none. Decode it with encoding/json; "@class" is then
	// an unknown member, ignored by a struct.
	Payload json.RawMessage
	// Registered is when the instance was registered
	// ("registrationTimeUTC", milliseconds since the epoch): Register sets
	// it to the current time when it is zero. It is kept to the
	// millisecond.
	Registered time.Time
	// Type is the instance's ServiceType ("serviceType"); empty is
	// Dynamic.
	Type ServiceType
	// URISpec is the template of the instance's URI ("uriSpec"); see URI.
	URISpec URISpec
	// Disabled marks an instance that providers must not pick (Curator's
	// "enabled" false; Curator's ServiceProvider skips it too). It is
	// written only when true: Curator's default serializer never writes
	// "enabled", and readers take an instance without it as enabled.
	Disabled bool
	// Extra holds the JSON members of an instance that zkit does not know
	// (written by a newer Curator, or another client), by name. They are
	// kept: written back as they were, after the known members, in the
	// order of their names. Names of known members are not allowed here.
	Extra map[string]json.RawMessage

	// Path is the instance's node, and Stat its Stat, when the instance was
	// read from ZooKeeper; Register and Update ignore them.
	Path string
	Stat *client.Stat
}

// The JSON members of a ServiceInstance, in the order Curator writes them.
const (
	jsonName       = "name"
	jsonID         = "id"
	jsonAddress    = "address"
	jsonPort       = "port"
	jsonSSLPort    = "sslPort"
	jsonPayload    = "payload"
	jsonRegistered = "registrationTimeUTC"
	jsonType       = "serviceType"
	jsonURISpec    = "uriSpec"
	jsonEnabled    = "enabled"
)

var knownMembers = []string{jsonName, jsonID, jsonAddress, jsonPort, jsonSSLPort, jsonPayload,
	jsonRegistered, jsonType, jsonURISpec, jsonEnabled}

// MarshalJSON writes the instance as Curator's JsonInstanceSerializer does
// (in its default, compatible mode: "enabled" only when false), followed
// by Extra. Path and Stat are not part of it. Like Jackson it leaves "&",
// "<" and ">" in strings as they are; json.Marshal of an Instance escapes
// them, which changes no value.
func (i Instance) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	// As Jackson writes it: "&", "<" and ">" as they are.
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	write := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		return nil
	}
	member := func(name string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		// The name is encoded too: the name of a member zkit does not
		// know may hold a quote, a backslash or a control character.
		if err := write(name); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := write(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	t := i.Type
	if t == "" {
		t = Dynamic
	}
	var registered int64
	if !i.Registered.IsZero() {
		registered = i.Registered.UnixMilli()
	}
	members := []struct {
		name string
		v    any
	}{
		{jsonName, i.Name}, {jsonID, i.ID}, {jsonAddress, nullString(i.Address)},
		{jsonPort, nullInt(i.Port)}, {jsonSSLPort, nullInt(i.SSLPort)},
		{jsonPayload, nullRaw(i.Payload)}, {jsonRegistered, registered}, {jsonType, t},
		{jsonURISpec, i.URISpec.jsonValue()},
	}
	for _, m := range members {
		if err := member(m.name, m.v); err != nil {
			return nil, err
		}
	}
	if i.Disabled {
		if err := member(jsonEnabled, false); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(i.Extra))
	for name := range i.Extra {
		if slices.Contains(knownMembers, name) {
			return nil, fmt.Errorf("extra member %q is a member of ServiceInstance", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := member(name, nullRaw(i.Extra[name])); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a ServiceInstance as Curator writes it, in either of
// its serializer's modes. Members it does not know go to Extra; a member
// of the wrong type is an error, as it is for Curator. Path and Stat are
// left as they are.
func (i *Instance) UnmarshalJSON(data []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	if members == nil {
		return fmt.Errorf("a service instance is a JSON object, not null")
	}
	out := Instance{Path: i.Path, Stat: i.Stat}
	var err error
	field := func(name string, v any) {
		raw, ok := members[name]
		delete(members, name)
		if !ok || err != nil || isNull(raw) {
			return
		}
		if e := json.Unmarshal(raw, v); e != nil {
			err = fmt.Errorf("member %q: %w", name, e)
		}
	}
	var (
		registered int64
		spec       *uriSpecJSON
		enabled    = true
	)
	field(jsonName, &out.Name)
	field(jsonID, &out.ID)
	field(jsonAddress, &out.Address)
	field(jsonPort, &out.Port)
	field(jsonSSLPort, &out.SSLPort)
	field(jsonRegistered, &registered)
	field(jsonType, &out.Type)
	field(jsonURISpec, &spec)
	field(jsonEnabled, &enabled)
	if err != nil {
		return err
	}
	if raw, ok := members[jsonPayload]; ok {
		delete(members, jsonPayload)
		if !isNull(raw) {
			out.Payload = bytes.Clone(raw)
		}
	}
	if registered != 0 {
		out.Registered = time.UnixMilli(registered).UTC()
	}
	if spec != nil {
		out.URISpec = URISpec(spec.Parts)
		if out.URISpec == nil {
			out.URISpec = URISpec{}
		}
	}
	out.Disabled = !enabled
	if len(members) > 0 {
		out.Extra = make(map[string]json.RawMessage, len(members))
		for name, raw := range members {
			out.Extra[name] = bytes.Clone(raw)
		}
	}
	*i = out
	return nil
}

// Equal reports whether a and b describe the same instance: every member
// of their JSON form is equal (payloads and extra members as JSON values,
// whatever their spacing or member order), Registered to the millisecond.
// Path and Stat are not compared.
func (i Instance) Equal(o Instance) bool {
	a, b := i, o
	a.Path, a.Stat, b.Path, b.Stat = "", nil, "", nil
	x, err1 := canonical(a)
	y, err2 := canonical(b)
	return err1 == nil && err2 == nil && x == y
}

// canonical is i's JSON with every JSON value in a canonical form.
func canonical(i Instance) (string, error) {
	data, err := json.Marshal(i)
	if err != nil {
		return "", err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v) // maps are written in key order
	return string(out), err
}

// String is the instance's JSON form, or a description of why it has none.
func (i Instance) String() string {
	data, err := i.MarshalJSON()
	if err != nil {
		return fmt.Sprintf("instance %s/%s: %v", i.Name, i.ID, err)
	}
	return string(data)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

func nullRaw(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	return r
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }
