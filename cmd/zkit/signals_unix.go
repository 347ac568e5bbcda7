//go:build unix

package main

import (
	"os"
	"syscall"
)

// stopSignals are the signals that stop zkit. Each ends the command's
// context; while CMD runs each is also forwarded to CMD's process group
// (runWhileHeld), and zkit exits once that group is gone.
//
// A signal that was ignored when zkit started (SIGHUP under nohup, SIGINT
// in a shell's background job) stays ignored, by zkit and by CMD.
//
// SIGQUIT is one of them, so zkit does not dump its goroutines on it.
// SIGUSR1, SIGUSR2 and a SIGPIPE sent with kill are not: a Go program
// ignores those by default, so they never ended zkit and are not
// forwarded; send them to CMD's group directly.
var stopSignals = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM}

// signalName is SIGTERM for syscall.SIGTERM.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return s.String()
}
