// Package license checks the repository's LICENSE: that it is the Apache
// License 2.0, as the detector pkg.go.dev uses (github.com/google/licensecheck)
// reads it. pkg.go.dev shows a module's documentation only when it detects
// a license it accepts, and dependency reviews refuse unlicensed modules.
//
// The package holds a test only, so that no package a user imports depends
// on the detector.
package license
