package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
)

// topSettle is how long top waits after a watch fires before it scans
// again, so that a burst of changes costs one scan.
const topSettle = 100 * time.Millisecond

func newTopCmd(a *app) *cobra.Command {
	var maxNodes int
	cmd := &cobra.Command{
		Use:   "top [PATH...]",
		Short: "Watch the locks, elections, semaphores and groups under PATHs live",
		Long: `Shows, in the terminal, every lock, read/write lock, semaphore, election, double
barrier, group and discovery service under the PATHs (default /), one line each:

  HOLDER        the session (hex) of the first holder or leader, "+N" for N more
                holders; the number of members or instances of a barrier, group or
                discovery service
  HELD          how long the oldest holder's node has existed
  WAITING       how many wait behind the holders
  LONGEST WAIT  how long the oldest waiter's node has existed
  SESSIONS      how many sessions own nodes of the recipe

top reads the tree once, then again only when a watch it set fires (a node created,
changed or deleted under the PATHs), a moment later so that a burst costs one read;
it does not poll. The first line says whether its own connection is up (connected,
SUSPENDED, or SESSION LOST until a new session is established), and how often it was
suspended. Ages count on between reads. At most --max-nodes nodes are read each time. See "zkit inspect PATH" for the nodes of one recipe.

Keys: q or Ctrl-C quits, and the terminal is restored. top needs a terminal; for
scripts, use zkit inspect PATH -o json.`,
		Example: `  zkit top
  zkit top /app/locks /services --servers zk1:2181,zk2:2181`,
		RunE: func(cmd *cobra.Command, args []string) error {
			roots := args
			if len(roots) == 0 {
				roots = []string{"/"}
			}
			for _, r := range roots {
				if reason := client.ValidatePath(r, false); reason != "" {
					return usagef("invalid PATH %q: %s", r, reason)
				}
			}
			switch {
			case a.json():
				return usagef("top draws a screen; for JSON, use zkit inspect PATH -o json")
			case maxNodes < 1:
				return usagef("--max-nodes %d: must be at least 1", maxNodes)
			case !stdinTerminal(a) || !isTerminal(a.stdout):
				return usagef("top needs a terminal on its standard input and output; for scripts, use zkit inspect PATH -o json")
			}
			return a.top(cmd.Context(), roots, maxNodes)
		},
	}
	cmd.Flags().IntVar(&maxNodes, "max-nodes", inspect.DefaultMaxNodes, "read at most this many nodes each time")
	return cmd
}

// stdinTerminal reports whether zkit's standard input is a terminal.
func stdinTerminal(a *app) bool {
	f, ok := a.stdin.(*os.File)
	return ok && isTerminal(f)
}

func (a *app) top(ctx context.Context, roots []string, maxNodes int) error {
	servers, err := a.serverList()
	if err != nil {
		return err
	}
	c, err := a.connectToRead(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := &topModel{servers: strings.Join(servers, ","), roots: strings.Join(roots, " "), now: time.Now()}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(a.stdin), tea.WithOutput(a.stdout))
	go followTree(ctx, c, inspect.NewScanner(c, roots, maxNodes), p.Send)
	_, err = p.Run()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return failf("%v", err)
	}
	return nil
}

// followTree scans the tree, and again whenever a watch the scan set
// fires or the connection changes, sending each scan and the state of
// the connection, until ctx ends.
func followTree(ctx context.Context, c *client.Client, s *inspect.Scanner, send func(tea.Msg)) {
	for {
		changed := c.Changed()
		suspended, _ := c.Suspended()
		sess := c.Session()
		send(connMsg{suspended: suspended, lost: sess == nil || !sess.Alive()})
		snap, err := s.Scan(ctx)
		if ctx.Err() != nil {
			return
		}
		send(scanMsg{snap, err})
		select {
		case <-s.Changed():
		case <-changed:
		case <-ctx.Done():
			return
		}
		select {
		case <-time.After(topSettle):
		case <-ctx.Done():
			return
		}
	}
}

// The messages of top's model.
type (
	scanMsg struct {
		snap *inspect.Snapshot
		err  error
	}
	connMsg struct{ suspended, lost bool } // lost: no live session (lost, no new one yet)
	tickMsg time.Time
)

// topModel is what top shows: the last scan, the connection's state, the
// screen's size. Its view is inspect.Top's table.
type topModel struct {
	servers, roots string
	snap           *inspect.Snapshot
	err            error // the last scan's, until one succeeds
	suspended      bool
	lost           bool // the session was lost and no new one is established yet
	suspensions    int  // how often the connection was suspended
	now            time.Time
	width, height  int
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *topModel) Init() tea.Cmd { return tick() }

func (m *topModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c":
			return m, tea.Quit
		}
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case scanMsg:
		m.err = msg.err
		if msg.err == nil {
			m.snap = msg.snap
		}
		m.now = time.Now()
	case connMsg:
		if msg.suspended && !m.suspended {
			m.suspensions++
		}
		m.suspended, m.lost = msg.suspended, msg.lost
	case tickMsg:
		m.now = time.Time(msg)
		return m, tick()
	}
	return m, nil
}

func (m *topModel) View() tea.View {
	v := tea.NewView(inspect.Top(m.title(), m.snap, m.now, m.width, m.height))
	v.AltScreen = true
	return v
}

// title is top's first line: where it looks, when, and how its own
// connection is.
func (m *topModel) title() string {
	conn := "connected"
	switch {
	case m.lost:
		conn = "SESSION LOST"
	case m.suspended:
		conn = "SUSPENDED"
	}
	t := fmt.Sprintf("zkit top  %s  %s  %s  %s, suspended %d times  (q quits)",
		m.servers, m.roots, m.now.Format("15:04:05"), conn, m.suspensions)
	if m.err != nil {
		t += "  last read failed: " + oneLine(m.err)
	}
	return t
}
