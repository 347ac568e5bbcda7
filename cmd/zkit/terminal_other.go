//go:build unix && !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package main

// On these systems the supervisor does not hand the terminal to CMD
// (terminal.go): an interactive CMD that reads the terminal stops.

func foregroundGroup() int      { return 0 }
func giveBackTerminal(int, int) {}
