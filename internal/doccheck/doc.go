// Package doccheck checks the repository's documents. It holds tests only,
// so that no package a user imports depends on what they use.
//
//   - The README: every Go example in it is a run of lines of a runnable
//     Example test, so that what users copy compiles and does what the
//     README says. A code block is checked when the line before its
//     opening fence names its source: "<!-- from lock/example_test.go -->".
//   - The LICENSE: that it is the Apache License 2.0, as the detector
//     pkg.go.dev uses (github.com/google/licensecheck) reads it. pkg.go.dev
//     shows a module's documentation only when it detects a license it
//     accepts, and dependency reviews refuse unlicensed modules.
package doccheck
