package barrier

// DirKnown is dirKnown, for the tests of the order of a member's first
// requests.
var DirKnown = dirKnown
