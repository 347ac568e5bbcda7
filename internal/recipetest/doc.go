// Package recipetest is test support for zkit's recipes (lock, rwlock and
// the primitives built like them): small wait helpers, and Java peers that
// drive Curator's recipes on the same paths. The servers to run against,
// and their faults, are zktest.EachBackend's.
//
// It is for tests only; its functions fail the test they are given
// instead of returning errors.
package recipetest
