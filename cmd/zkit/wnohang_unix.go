//go:build unix && !aix

package main

import "syscall"

// wNoHang is WNOHANG (wnohang_aix.go has AIX's).
const wNoHang = syscall.WNOHANG
