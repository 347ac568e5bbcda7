package inspect

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/zkit-dev/zkit/client"
)

// Kind is what lives at a path.
type Kind string

// The kinds Inspect recognises; Unknown is everything else.
const (
	Unknown    Kind = "unknown"
	Lock       Kind = "lock"
	RWLock     Kind = "rwlock"
	Semaphore  Kind = "semaphore"
	Election   Kind = "election"
	Barrier    Kind = "barrier"
	Counter    Kind = "counter"
	Group      Kind = "group"
	Rendezvous Kind = "rendezvous"
	Config     Kind = "config"
	Discovery  Kind = "discovery"
)

// Role is what a node does in its recipe.
type Role string

// The roles of nodes in a Report.
const (
	Holder    Role = "holder"    // holds a lock, a read/write lock, a semaphore lease; owns a rendezvous
	Waiter    Role = "waiter"    // waits in a queue, in order
	Leader    Role = "leader"    // leads an election
	Candidate Role = "candidate" // waits to lead, in order
	Member    Role = "member"    // a barrier's or a group's member
	Key       Role = "key"       // a configuration key
	Instance  Role = "instance"  // a discovery instance
	Child     Role = "child"     // a child of a path not recognised
)

// Origin is the client library that wrote a node, where the node tells.
type Origin string

// The origins a node can show; the zero Origin is zkit's layout (shared
// with Curator where the node does not tell them apart).
const (
	Zkit    Origin = "zkit"
	Curator Origin = "curator"
	Kazoo   Origin = "kazoo"
)

// Node is one node of a recipe.
type Node struct {
	Role Role
	// Name is the node's path relative to the Report's: its name, or
	// "leases/<name>" for a semaphore's lease. The rendezvous node itself
	// has the empty name.
	Name   string
	Origin Origin // empty when the layout does not tell
	// Mode is "read" or "write" for a read/write lock's nodes.
	Mode string
	// ID is who holds or waits, where the name does not say: the data of
	// a queued or leased node (a lock's, a read/write lock's, a semaphore
	// lease's: zkit's --id, Curator's host address; an election
	// candidate's id; a kazoo participant's identifier), a discovery
	// instance's id. A group member's id is its name.
	ID      string
	Service string // a discovery instance's service
	Session int64  // the ephemeralOwner; 0 for a persistent node
	// Token is a queued or leased node's fencing token (recipes.TokenOf
	// its czxid: its first holder's), any other node's czxid.
	Token   int64
	Created time.Time
	Data    []byte
	// Children is the number of children, for the nodes of a path not
	// recognised.
	Children int32
}

// Value is a counter's value in one encoding (package counter's names:
// "long", "int", "text").
type Value struct {
	Encoding string `json:"encoding"`
	Value    int64  `json:"value"`
}

// Report is what Inspect found at a path.
type Report struct {
	Path string
	Kind Kind
	// Origin is set when every node of the recipe shows the same one: a
	// kazoo lock, a Curator semaphore.
	Origin Origin
	Stat   *client.Stat // the path's own node
	Data   []byte       // the path's own data (a counter's, a rendezvous address)
	// Nodes are the recipe's nodes in order: holders before waiters, each
	// in queue order; a leader before the candidates; members, keys and
	// instances by name.
	Nodes  []Node
	Ready  *bool   // a barrier's or a configuration's ready node exists
	Values []Value // a counter's value in every encoding its data fits
	Notes  []string
	At     time.Time // when the read began
}

// With returns the nodes in role.
func (r *Report) With(role Role) []Node {
	var out []Node
	for _, n := range r.Nodes {
		if n.Role == role {
			out = append(out, n)
		}
	}
	return out
}

// Held returns the nodes that hold: holders, or the leader.
func (r *Report) Held() []Node { return append(r.With(Holder), r.With(Leader)...) }

// Queued returns the nodes that wait, in order: waiters, or candidates.
func (r *Report) Queued() []Node { return append(r.With(Waiter), r.With(Candidate)...) }

// Sessions is the number of distinct sessions that own nodes of the recipe.
func (r *Report) Sessions() int {
	seen := map[int64]bool{}
	for _, n := range r.Nodes {
		if n.Session != 0 {
			seen[n.Session] = true
		}
	}
	return len(seen)
}

// Age is how long n had existed when the report was read.
func (r *Report) Age(n Node) time.Duration {
	if n.Created.IsZero() || r.At.Before(n.Created) {
		return 0
	}
	return r.At.Sub(n.Created).Truncate(time.Millisecond)
}

// Session renders a session id the way ZooKeeper's tools print it.
func Session(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// nodeJSON is Node's JSON form: the session in hex, the age in
// milliseconds, the data as a string ("data"), or in base64
// ("data_base64") when it is not UTF-8.
type nodeJSON struct {
	Role    Role   `json:"role"`
	Name    string `json:"name"`
	Origin  Origin `json:"origin,omitempty"`
	Mode    string `json:"mode,omitempty"`
	ID      string `json:"id,omitempty"`
	Service string `json:"service,omitempty"`
	Session string `json:"session,omitempty"`
	Token   int64  `json:"token"`
	Created string `json:"created"`
	AgeMs   int64  `json:"age_ms"`
	DataJSON
	Children int32 `json:"children,omitempty"`
}

// DataJSON is a node's data in the JSON output of zkit's commands: "data"
// when it is UTF-8 text, else "data_base64", so that no byte is lost.
type DataJSON struct {
	Data       *string `json:"data,omitempty"`
	DataBase64 string  `json:"data_base64,omitempty"`
}

// NewDataJSON returns b in its JSON form.
func NewDataJSON(b []byte) DataJSON {
	if !utf8.Valid(b) {
		return DataJSON{DataBase64: base64.StdEncoding.EncodeToString(b)}
	}
	s := string(b)
	return DataJSON{Data: &s}
}

// MarshalJSON renders the report as one JSON object.
func (r *Report) MarshalJSON() ([]byte, error) {
	nodes := make([]nodeJSON, len(r.Nodes))
	for i, n := range r.Nodes {
		j := nodeJSON{Role: n.Role, Name: n.Name, Origin: n.Origin, Mode: n.Mode, ID: n.ID, Service: n.Service,
			Token: n.Token, Created: n.Created.UTC().Format(time.RFC3339Nano), AgeMs: r.Age(n).Milliseconds(),
			DataJSON: NewDataJSON(n.Data), Children: n.Children}
		if n.Session != 0 {
			j.Session = Session(n.Session)
		}
		nodes[i] = j
	}
	out := struct {
		Path    string `json:"path"`
		Kind    Kind   `json:"kind"`
		Origin  Origin `json:"origin,omitempty"`
		Session string `json:"session,omitempty"`
		DataJSON
		Ready  *bool      `json:"ready,omitempty"`
		Values []Value    `json:"values,omitempty"`
		Nodes  []nodeJSON `json:"nodes"`
		Notes  []string   `json:"notes,omitempty"`
		At     string     `json:"at"`
	}{Path: r.Path, Kind: r.Kind, Origin: r.Origin, DataJSON: NewDataJSON(r.Data), Ready: r.Ready, Values: r.Values,
		Nodes: nodes, Notes: r.Notes, At: r.At.UTC().Format(time.RFC3339Nano)}
	if r.Stat != nil && r.Stat.EphemeralOwner != 0 {
		out.Session = Session(r.Stat.EphemeralOwner)
	}
	return json.Marshal(out)
}
