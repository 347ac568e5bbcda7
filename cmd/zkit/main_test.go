package main

import (
	"os"
	"os/signal"
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
	catchIgnoredStops()
	code := zktest.Main(m)
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// catchIgnoredStops catches the stop signals that this test binary started
// with ignored: run under nohup (SIGHUP) or as a shell's background job
// (SIGINT, SIGQUIT), the zkit processes the tests start would inherit the
// ignoring, and zkit keeps a signal ignored at its start ignored, as nohup
// asks, so the tests that send those signals would fail. A caught signal
// is reset to its default by exec; an ignored one is not.
func catchIgnoredStops() {
	for _, s := range stopSignals {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
}
