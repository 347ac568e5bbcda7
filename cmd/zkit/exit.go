package main

import (
	"errors"
	"fmt"
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
  0  success (or CMD's status, for commands that run one)
  1  the operation failed
  2  usage error
  3  no ZooKeeper reachable
  4  timed out (--wait), or taken by another (--try)
  5  lost: what was held ended while CMD ran (CMD's processes got SIGTERM),
     or another barrier member vanished instead of leaving
  128+N  stopped by signal N before CMD ran (SIGINT 130, SIGTERM 143);
     once CMD ran, zkit exits with CMD's status
`

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

// oneLine renders err for stderr: one line, without the "zkit: " that the
// library puts before its messages (the command's name is there already).
func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "zkit: ", "")
	return strings.Join(strings.Fields(s), " ")
}
