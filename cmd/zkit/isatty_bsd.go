//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package main

import "syscall"

// ioctlGetTermios reads a terminal's attributes (isTerminalFile).
const ioctlGetTermios = syscall.TIOCGETA
