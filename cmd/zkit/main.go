package main

import "os"

func main() {
	if status, ok := runSupervisor(os.Args); ok {
		os.Exit(status) // zkit started itself to supervise a CMD
	}
	os.Exit(execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
