//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// CMD runs in a process group of its own, which a terminal takes for a
// background job: reading from it would stop CMD (SIGTTIN). So when zkit
// runs in the foreground of the terminal on its standard input, the
// supervisor hands the terminal to CMD's group, as a shell does with a
// job, and gives it back to zkit's group once CMD's group is gone. The
// terminal's ^C and ^\ then go to CMD's group, not to zkit: CMD ends, and
// zkit exits with its status. ^Z stops CMD but not zkit: a limit.

// foregroundTerminal reports whether the supervisor's standard input is
// a terminal whose foreground process group is zkit's.
func foregroundTerminal() bool {
	fg, err := terminalGroup()
	return err == nil && fg == zkitGroup()
}

// giveBackTerminal makes zkit's group the foreground of the terminal
// again if pgid (CMD's group) still has it.
func giveBackTerminal(pgid int) {
	if fg, err := terminalGroup(); err != nil || fg != pgid {
		return
	}
	// A background process may set the foreground group only while it
	// ignores SIGTTOU; the supervisor starts nothing more.
	signal.Ignore(syscall.SIGTTOU)
	g := int32(zkitGroup())
	syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&g)))
}

// terminalGroup is the foreground process group of the terminal on
// standard input.
func terminalGroup() (int, error) {
	var g int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&g))); e != 0 {
		return 0, e
	}
	return int(g), nil
}

// zkitGroup is the process group of the supervisor's parent, zkit.
func zkitGroup() int {
	g, err := syscall.Getpgid(os.Getppid())
	if err != nil {
		return -1
	}
	return g
}
