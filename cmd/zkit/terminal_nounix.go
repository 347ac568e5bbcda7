//go:build !unix

package main

import "os"

// isTerminalFile reports whether f is a character device, the nearest
// this system offers to a terminal check without a console call.
func isTerminalFile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
