package main

import "syscall"

// ioctlGetTermios reads a terminal's attributes (isTerminalFile).
const ioctlGetTermios = syscall.TCGETS
