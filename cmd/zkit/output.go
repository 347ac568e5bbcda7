package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
)

// What commands print on stdout: with -o text (the default) one value a
// line, escaped where it is not printable text; with -o json one JSON
// object a line.

// emit prints one record: v as a line of JSON with -o json, else text as
// a line.
func (a *app) emit(text string, v any) error {
	if a.json() {
		return a.writeJSON(v)
	}
	_, err := fmt.Fprintln(a.stdout, text)
	return err
}

// isTerminal reports whether stream (stdin, stdout or stderr) is a
// terminal.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && isTerminalFile(f)
}

// nodeJSON is the JSON output of a command that prints the node it
// created or holds.
type nodeJSON struct {
	Node string `json:"node"`
}

// heldJSON is the JSON output of lock and elect holding without a CMD, and
// of elect --leader and --observe.
type heldJSON struct {
	Leader bool   `json:"leader,omitempty"`
	ID     string `json:"id,omitempty"`
	Node   string `json:"node"`
	Token  int64  `json:"token"`
}

// writeJSON prints v as one line of JSON.
func (a *app) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return failf("%v", err)
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n", b)
	return err
}

// printable renders s for a line of text output: as it is when every rune
// is printable (spaces included, tabs and newlines not) and it does not
// start with a double quote, else quoted as a Go string ("a\tb\n",
// "\xff"), so that one value is always one line.
func printable(s string) string {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}

// dataJSON is a node's data in JSON output: "data" when it is UTF-8 text,
// else "data_base64" (as inspect's report has it).
type dataJSON = inspect.DataJSON

var newDataJSON = inspect.NewDataJSON
