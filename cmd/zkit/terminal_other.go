//go:build unix && !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

import "os"

// On these systems the supervisor does not hand the terminal to CMD
// (terminal.go): an interactive CMD that reads the terminal stops.

func foregroundGroup() int { return 0 }

// isTerminalFile reports whether f is a character device, the nearest to
// a terminal check without the system's own ioctl.
func isTerminalFile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
func giveBackTerminal(int, int) {}
