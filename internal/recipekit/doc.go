// Package recipekit holds what zkit's recipe packages and package recipes
// share beneath recipes' API: the engine that deletes a recipe's nodes on
// every exit path (recipes.Remove is its public face), with what only
// zkit's own recipes use of it (RemoveProtected, NewerOwner); and the
// recipes' telemetry (Instruments), whose metrics and spans are zkit's. A
// recipe of a user's own needs none of it beyond recipes.Remove: one built
// on a Queue reports through it already, under its Kind's Recipe.
//
// It imports only the client: package recipes builds on it, and the recipe
// packages on both.
package recipekit
