// Package recipekit holds what zkit's recipe packages and package recipes
// share beneath recipes' API: the engine that deletes a recipe's nodes on
// every exit path (recipes.Remove is its public face), with what only
// zkit's own recipes use of it (RemoveProtected, NewerOwner). A recipe of
// a user's own needs none of it beyond recipes.Remove.
//
// It imports only the client: package recipes builds on it, and the recipe
// packages on both.
package recipekit
