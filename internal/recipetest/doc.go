// Package recipetest is test support for zkit's recipes (lock, rwlock and
// the primitives built like them): the servers a recipe test runs against,
// with the faults a recipe must survive, small connect and wait helpers,
// and a Java peer that drives Curator's locks on the same paths.
//
// It is for tests only; its functions fail the test they are given
// instead of returning errors.
package recipetest
