package inspect

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the report for a person: a header, then the nodes in
// aligned columns (only the columns some node fills), data escaped as Go
// string literals.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	kind := string(r.Kind)
	if r.Origin != "" {
		kind += " (" + string(r.Origin) + ")"
	}
	fmt.Fprintf(tw, "path:\t%s\n", r.Path)
	fmt.Fprintf(tw, "kind:\t%s\n", kind)
	if r.Ready != nil {
		fmt.Fprintf(tw, "ready:\t%s\n", yesNo(*r.Ready))
	}
	for _, v := range r.Values {
		fmt.Fprintf(tw, "value (%s):\t%d\n", v.Encoding, v.Value)
	}
	if r.Kind == Counter || r.Kind == Rendezvous || r.Kind == Unknown && len(r.Nodes) == 0 {
		fmt.Fprintf(tw, "data:\t%s\n", strconv.Quote(string(r.Data)))
	}
	if s := r.Sessions(); s > 0 {
		fmt.Fprintf(tw, "sessions:\t%d\n", s)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Nodes) > 0 {
		fmt.Fprintln(w)
		if err := r.writeNodes(w); err != nil {
			return err
		}
	}
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// column is one column of the node table.
type column struct {
	title string
	value func(r *Report, n Node) string
}

var columns = []column{
	{"ROLE", func(_ *Report, n Node) string { return string(n.Role) }},
	{"NODE", func(_ *Report, n Node) string { return n.Name }},
	{"ORIGIN", func(_ *Report, n Node) string { return string(n.Origin) }},
	{"MODE", func(_ *Report, n Node) string { return n.Mode }},
	{"SERVICE", func(_ *Report, n Node) string { return quoteIfNeeded(n.Service) }},
	{"ID", func(_ *Report, n Node) string {
		if n.ID == "" {
			return ""
		}
		return strconv.Quote(n.ID)
	}},
	{"SESSION", func(_ *Report, n Node) string {
		if n.Session == 0 {
			return "-"
		}
		return Session(n.Session)
	}},
	{"TOKEN", func(_ *Report, n Node) string { return strconv.FormatInt(n.Token, 10) }},
	{"AGE", func(r *Report, n Node) string { return Age(r.Age(n)) }},
	{"CHILDREN", func(_ *Report, n Node) string {
		if n.Role != Child {
			return ""
		}
		return strconv.Itoa(int(n.Children))
	}},
	{"DATA", func(_ *Report, n Node) string {
		if n.ID != "" && n.ID == string(n.Data) {
			return "" // said under ID
		}
		return strconv.Quote(string(n.Data))
	}},
}

func (r *Report) writeNodes(w io.Writer) error {
	var shown []column
	for _, c := range columns {
		for _, n := range r.Nodes {
			if c.value(r, n) != "" {
				shown = append(shown, c)
				break
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	titles := make([]string, len(shown))
	for i, c := range shown {
		titles[i] = c.title
	}
	fmt.Fprintln(tw, strings.Join(titles, "\t"))
	for _, n := range r.Nodes {
		cells := make([]string, len(shown))
		for i, c := range shown {
			cells[i] = c.value(r, n)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// Age renders a duration the way the tables show ages: milliseconds
// under a second, tenths of seconds under a minute, whole seconds above.
func Age(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// quoteIfNeeded returns s, or s escaped as a Go string when it holds
// anything that would not print as itself (a tab, a newline, an escape
// sequence, bytes that are not UTF-8): text from a node's data.
func quoteIfNeeded(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
