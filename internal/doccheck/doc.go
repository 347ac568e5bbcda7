// Package doccheck checks the repository's documents. It holds tests only,
// so that no package a user imports depends on what they use.
//
//   - The documents (the Markdown files at the top and in docs/): every Go
//     example in them is a run of lines of a runnable Example test, so that
//     what users copy compiles and does what the document says. A code
//     block is checked when the line before its opening fence names its
//     source: "<!-- from lock/example_test.go -->". Every relative link
//     names a file or directory that exists, and every anchor in a link to
//     a document a heading there.
//   - The LICENSE: that it is the Apache License 2.0, as the detector
//     pkg.go.dev uses (github.com/google/licensecheck) reads it. pkg.go.dev
//     shows a module's documentation only when it detects a license it
//     accepts, and dependency reviews refuse unlicensed modules.
package doccheck
