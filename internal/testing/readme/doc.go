// Package readme checks the repository's README: every Go example in it
// is a run of lines of a runnable Example test, so that what users copy
// compiles and does what the README says.
//
// A code block is checked when the line before its opening fence names its
// source: "<!-- from lock/example_test.go -->".
package readme
