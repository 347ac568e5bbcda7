package inspect

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// DefaultMaxNodes bounds the nodes one scan reads, by default.
const DefaultMaxNodes = 10000

// Scanner finds the recipes under some roots: every lock, read/write
// lock, semaphore, election, double barrier, group and discovery service
// or base (counters, configurations and rendezvous nodes are too like
// other nodes to be told apart without a path, see Inspect). It walks
// down from each root, reading each node and its children, and does not
// walk into a recipe it recognised, nor into /zookeeper.
//
// Every read sets a watch (a data watch on each node read, a child watch
// on each node listed or, for a node without children, not listed)
// unless one is set there already, so a node
// carries at most one watch of each kind however often it is scanned.
// When any of them fires, Changed gets a value: scan again. A lost
// session fires every watch, and the next scan sets them again.
type Scanner struct {
	rd       reader
	roots    []string
	maxNodes int
}

// NewScanner returns a scanner of the paths under roots, reading at most
// maxNodes nodes a scan (DefaultMaxNodes when maxNodes <= 0). It does no
// I/O; Scan checks the roots.
func NewScanner(c *client.Client, roots []string, maxNodes int) *Scanner {
	if maxNodes <= 0 {
		maxNodes = DefaultMaxNodes
	}
	return &Scanner{rd: reader{c: c, w: newWatches()}, roots: roots, maxNodes: maxNodes}
}

// Changed gets a value when a watch set by a scan fires. It holds one
// value however many fired: scan again once, after a short delay that
// lets a burst of changes settle.
func (s *Scanner) Changed() <-chan struct{} { return s.rd.w.changed }

// Snapshot is one scan's findings.
type Snapshot struct {
	Roots   []string
	Reports []*Report // the recipes found, by path
	Nodes   int       // the nodes read
	// Truncated is set when the scan stopped at its maximum of nodes, or
	// passed over a directory of more children than it had nodes left to
	// read: recipes further down, or in that directory, were not looked
	// for.
	Truncated bool
	// Unreadable are the paths whose children this client may not list
	// (their ACL): recipes below them were not looked for.
	Unreadable []string
	At         time.Time // when the scan began
}

// Scan walks the roots and returns the recipes found. A root that does
// not exist has none. An invalid root is a *client.InputError (nothing is
// sent); other errors are the client's (a lost connection, ctx's).
func (s *Scanner) Scan(ctx context.Context) (*Snapshot, error) {
	for _, root := range s.roots {
		if err := client.CheckPath("scan", root); err != nil {
			return nil, err
		}
	}
	snap := &Snapshot{Roots: s.roots, At: time.Now()}
	seen := map[string]bool{}
	for _, root := range s.roots {
		if err := s.walk(ctx, root, snap, seen); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(snap.Reports, func(a, b *Report) int { return strings.Compare(a.Path, b.Path) })
	return snap, nil
}

// scanned are the kinds a scan reports.
var scanned = map[Kind]bool{Lock: true, RWLock: true, Semaphore: true, Election: true, Barrier: true, Group: true, Discovery: true}

// walk inspects path and, unless it is a recipe, the directories below.
func (s *Scanner) walk(ctx context.Context, path string, snap *Snapshot, seen map[string]bool) error {
	if seen[path] || path == "/zookeeper" {
		return nil
	}
	seen[path] = true
	if snap.Nodes >= s.maxNodes {
		snap.Truncated = true
		return nil
	}
	rd := s.rd // its watches, and a limit of the nodes left
	rd.limit = s.maxNodes - snap.Nodes
	r, kids, err := inspect(ctx, &rd, path)
	switch {
	case errors.Is(err, errTooMany):
		snap.Truncated = true // a directory too large for the nodes left
		return nil
	case errors.Is(err, client.ErrNoNode) && slices.Contains(s.roots, path):
		return s.watchRoot(ctx, path)
	case errors.Is(err, client.ErrNoNode):
		return nil // gone since its parent was listed
	case errors.Is(err, client.ErrNoAuth):
		snap.Unreadable = append(snap.Unreadable, path)
		return nil
	case err != nil:
		return err
	}
	snap.Nodes += 1 + len(kids)
	if scanned[r.Kind] {
		snap.Reports = append(snap.Reports, r)
		return nil
	}
	for _, k := range kids {
		p := client.JoinPath(path, k.name)
		if k.stat.NumChildren == 0 {
			err = s.rd.watchChildren(ctx, p) // to see a recipe start there
		} else {
			err = s.walk(ctx, p, snap, seen)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// watchRoot watches a missing root for its creation (its failed read set
// no watch), so that a scan learns of the recipes that start there. A root
// created since its read is signalled as a change at once.
func (s *Scanner) watchRoot(ctx context.Context, root string) error {
	ok, _, err := s.rd.exists(ctx, root)
	switch {
	case errors.Is(err, client.ErrNoAuth):
		return nil
	case err != nil:
		return err
	case ok:
		s.rd.w.signal()
	}
	return nil
}
