package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Exit statuses. A command that runs CMD exits with CMD's status once CMD
// has run; these are zkit's own.
const (
	exitOK          = 0
	exitFailed      = 1 // the operation failed; the message says why
	exitUsage       = 2 // the command line is wrong
	exitUnreachable = 3 // no ZooKeeper server answered in time
	exitTimeout     = 4 // not done in time: --wait expired, or --try found it taken
	exitLost        = 5 // a held lock, term or membership was lost while CMD ran; a barrier member vanished
)

const exitHelp = `Exit status:
  0      success (or CMD's status, for commands that run one)
  1      the operation failed
  2      usage error
  3      no ZooKeeper reachable
  4      timed out (--wait), or taken by another (--try)
  5      lost: what was held ended while CMD ran (CMD's processes got SIGTERM),
         or another barrier member vanished instead of leaving
  128+N  stopped by signal N before CMD ran (SIGHUP 129, SIGINT 130,
         SIGQUIT 131, SIGTERM 143); once CMD ran, zkit exits with CMD's status
zkit ensemble status: 0 when a quorum answers, 1 when servers answer but none
serves (no quorum), 3 when none answers.
With --exit-base B, zkit's own 1-5 are B+1..B+5 (CMD's status and 128+N are
not moved), so that they can be told from a CMD's own 1-5.
In scripts: a background job (zkit ... &) of a non-interactive shell starts with
SIGINT and SIGQUIT ignored, and zkit keeps them ignored; stop it with SIGTERM.
`

// maxExitBase is the largest --exit-base: zkit's statuses stay below 256.
const maxExitBase = 250

// exitBaseArg is --exit-base's value in args (before "--"), else
// $ZKIT_EXIT_BASE's, or 0 if neither is there or valid (cobra then says
// so). It is read from args
// rather than the parsed flag so that it applies to every usage error,
// including those cobra finds before it parses the flag.
func exitBaseArg(args []string) int {
	base := 0
	if n, err := strconv.Atoi(os.Getenv(envName("exit-base"))); err == nil && n >= 0 && n <= maxExitBase {
		base = n
	}
	for i := 0; i < len(args) && args[i] != "--"; i++ {
		v, ok := strings.CutPrefix(args[i], "--exit-base=")
		if !ok && args[i] == "--exit-base" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= maxExitBase {
			base = n
		} else {
			base = 0
		}
	}
	return base
}

// exitError is an error with the status zkit exits with.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usagef(format string, args ...any) error   { return errorf(exitUsage, format, args...) }
func failf(format string, args ...any) error    { return errorf(exitFailed, format, args...) }
func timeoutf(format string, args ...any) error { return errorf(exitTimeout, format, args...) }
func lostf(format string, args ...any) error    { return errorf(exitLost, format, args...) }

// cmdStatus passes CMD's exit status on as zkit's, printing nothing (CMD
// has said what it had to say). It is nil for status 0.
func cmdStatus(status int) error {
	if status == 0 {
		return nil
	}
	return &exitError{code: status}
}

func errorf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// statusOf is the exit status for err.
func statusOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}

// about renders err for a message about path: "what: err", unless err
// names path already (the client's errors do, create "/a": ..., and the
// recipes', barrier /a: ...), then err alone: a message names its path
// once.
func about(what, path string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "zkit: ")
	for i := 0; ; {
		j := strings.Index(msg[i:], path)
		if j < 0 {
			return what + ": " + msg
		}
		i += j + len(path)
		if i == len(msg) || strings.ContainsRune(" \":,;)/", rune(msg[i])) {
			return msg
		}
	}
}

// cause renders err as the cause in a message that names path already:
// without a leading "path: " (a recipe's ConflictError has one).
func cause(path string, err error) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), "zkit: "), path+": ")
}

// oneLine renders err for stderr: one line, without the "zkit: " that the
// library puts before its messages (the command's name is there already).
func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "zkit: ", "")
	return strings.Join(strings.Fields(s), " ")
}
