package inspect

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// TopRow is one recipe's line in zkit top: what a person scanning for a
// slow lock wants first.
type TopRow struct {
	Path     string
	Kind     string // the kind, and the origin when all its nodes share one: "lock (kazoo)"
	Holder   string // the first holder's ID, else its session (and how many more), or the number of members
	Held     time.Duration
	Waiting  int
	Longest  time.Duration // the longest wait in the queue
	Sessions int
}

// Rows are the snapshot's recipes as lines of zkit top, their ages as of
// now.
func (s *Snapshot) Rows(now time.Time) []TopRow {
	rows := make([]TopRow, 0, len(s.Reports))
	for _, r := range s.Reports {
		row := TopRow{Path: r.Path, Kind: string(r.Kind), Waiting: len(r.Queued()), Sessions: r.Sessions()}
		if r.Origin != "" {
			row.Kind += " (" + string(r.Origin) + ")"
		}
		held := r.Held()
		switch {
		case len(held) > 0:
			row.Holder = holder(held[0])
			if len(held) > 1 {
				row.Holder += fmt.Sprintf(" +%d", len(held)-1)
			}
		case r.Kind == Barrier || r.Kind == Group:
			held = r.With(Member)
			row.Holder = plural(len(held), "member")
		case r.Kind == Discovery:
			held = r.With(Instance)
			row.Holder = plural(len(held), "instance")
		default:
			row.Holder = "-"
		}
		row.Held = oldest(held, now)
		row.Longest = oldest(r.Queued(), now)
		rows = append(rows, row)
	}
	return rows
}

// holder names a holder for a person: by its ID (what zkit's --id or
// Curator's host address says), escaped where it is not printable text,
// else by its session.
func holder(n Node) string {
	if n.ID != "" {
		return quoteIfNeeded(n.ID)
	}
	return Session(n.Session)
}

// oldest is the age of the oldest of nodes, as of now.
func oldest(nodes []Node, now time.Time) time.Duration {
	var d time.Duration
	for _, n := range nodes {
		d = max(d, now.Sub(n.Created))
	}
	return d
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Top renders zkit top's screen: title, then a table of the snapshot's
// recipes with their ages as of now, cut to width columns and height
// lines (a last line says how many rows did not fit). A nil snapshot is
// a screen still waiting for its first scan.
func Top(title string, snap *Snapshot, now time.Time, width, height int) string {
	lines := []string{title, ""}
	switch {
	case snap == nil:
		lines = append(lines, "scanning...")
	case len(snap.Reports) == 0:
		lines = append(lines, fmt.Sprintf("no recipes under %s (%d nodes read)", strings.Join(snap.Roots, " "), snap.Nodes))
	default:
		lines = append(lines, table(snap.Rows(now))...)
	}
	if snap != nil && snap.Truncated {
		lines = append(lines, fmt.Sprintf("stopped after %d nodes: recipes further down are not shown", snap.Nodes))
	}
	if snap != nil && len(snap.Unreadable) > 0 {
		lines = append(lines, fmt.Sprintf("not readable (ACL): %s", strings.Join(snap.Unreadable, " ")))
	}
	if height > 0 && len(lines) > height {
		cut := len(lines) - height + 1
		lines = append(lines[:height-1], fmt.Sprintf("... %d more lines", cut))
	}
	for i, l := range lines {
		lines[i] = clip(l, width)
	}
	return strings.Join(lines, "\n")
}

// table renders rows aligned under a header.
func table(rows []TopRow) []string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tKIND\tHOLDER\tHELD\tWAITING\tLONGEST WAIT\tSESSIONS")
	for _, r := range rows {
		held, longest := "-", "-"
		if r.Holder != "-" {
			held = Age(r.Held)
		}
		if r.Waiting > 0 {
			longest = Age(r.Longest)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\n", r.Path, r.Kind, r.Holder, held, r.Waiting, longest, r.Sessions)
	}
	tw.Flush()
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// clip cuts s to width runes; width <= 0 keeps it whole.
func clip(s string, width int) string {
	if width <= 0 {
		return s
	}
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width])
}
