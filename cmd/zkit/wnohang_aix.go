package main

// wNoHang is WNOHANG, which package syscall lacks on AIX.
const wNoHang = 0x1
