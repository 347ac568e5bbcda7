package doccheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/licensecheck"
)

// The LICENSE file is the Apache License 2.0, whole: one match, covering
// (nearly) all of the file.
func TestLicenseIsApache2(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	cov := licensecheck.Scan(text)
	if len(cov.Match) != 1 || cov.Match[0].ID != "Apache-2.0" {
		t.Fatalf("LICENSE matches %+v, want Apache-2.0 alone", cov.Match)
	}
	if cov.Percent < 95 {
		t.Errorf("LICENSE is %.1f%% Apache-2.0, want at least 95%%: text around the license hides it from detectors", cov.Percent)
	}
}
