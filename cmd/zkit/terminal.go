//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"os"
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

// foregroundGroup is zkit's process group if the supervisor's standard
// input is a terminal whose foreground process group that is; else 0.
func foregroundGroup() int {
	fg, err := terminalGroup()
	if err != nil {
		return 0
	}
	zkit, err := syscall.Getpgid(os.Getppid())
	if err != nil || fg != zkit {
		return 0
	}
	return zkit
}

// giveBackTerminal makes zkit's group the foreground of the terminal
// again if pgid (CMD's group) still has it. The supervisor ignores
// SIGTTOU, without which a background process could not.
func giveBackTerminal(pgid, zkit int) {
	if fg, err := terminalGroup(); err != nil || fg != pgid {
		return
	}
	g := int32(zkit)
	syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&g)))
}

// isTerminalFile reports whether f is a terminal: whether it has a
// terminal's attributes (a character device such as /dev/null has not).
func isTerminalFile(f *os.File) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), ioctlGetTermios, uintptr(unsafe.Pointer(&t)))
	return e == 0
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
