package doccheck

import (
	"path/filepath"
	"slices"
	"testing"
)

// root is the repository, seen from this package's directory.
var root = filepath.Join("..", "..")

// docFiles lists the repository's documents, relative to root: the
// Markdown files at the top (README.md among them) and those in docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.md", filepath.Join("docs", "*.md")} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, filepath.ToSlash(rel))
		}
	}
	if !slices.Contains(files, "README.md") {
		t.Fatalf("no README.md among %v", files)
	}
	return files
}
