package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInstalledFindsWhatSetupInstalledFromAnyDirectory: a worker started
// from another directory than the checkout finds the runner beside its
// binary, and every path it gets is absolute, so a tool run from a job's
// own directory finds it too.
func TestInstalledFindsWhatSetupInstalledFromAnyDirectory(t *testing.T) {
	checkout := t.TempDir()
	runner := filepath.Join(checkout, ".cache", "pwtest")
	if err := os.MkdirAll(runner, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	defer func(e func() (string, error)) { executable = e }(executable)
	executable = func() (string, error) { return filepath.Join(checkout, "bin", "worker"), nil }

	for _, tc := range []struct{ name, in, want string }{
		{"relative, beside the binary", ".cache/pwtest", runner},
		{"absolute, as given", "/opt/pwtest", "/opt/pwtest"},
		{"relative and nowhere: under the working directory", ".cache/none", filepath.Join(elsewhere, ".cache", "none")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Installed(tc.in); got != tc.want {
				t.Fatalf("Installed(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// In the working directory it wins over the binary's checkout.
	if err := os.MkdirAll(filepath.Join(elsewhere, ".cache", "pwtest"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Installed(".cache/pwtest"); got != filepath.Join(elsewhere, ".cache", "pwtest") {
		t.Fatalf("Installed = %q, want the working directory's", got)
	}
}
