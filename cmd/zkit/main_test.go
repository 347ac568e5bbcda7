package main

import (
	"os"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

var tempDirs []string

// makeTempDir is a directory removed when the test binary ends (the zkit
// binary built once serves every test).
func makeTempDir() (string, error) {
	d, err := os.MkdirTemp("", "zkit-cmd-test-")
	if err == nil {
		tempDirs = append(tempDirs, d)
	}
	return d, err
}

func TestMain(m *testing.M) {
	if status, ok := runSupervisor(os.Args); ok {
		os.Exit(status) // a command run in-process started this binary to supervise its CMD
	}
	code := zktest.Main(m)
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
