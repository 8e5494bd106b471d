// Package suitetest holds the corpus of customer projects — suites written
// the ways real ones are (page objects, fixtures, hooks, loops over data,
// regular expressions, CommonJS and ESM, TypeScript with types) against the
// demo app — and runs a project the way its owner does, outside webpilot,
// for reference verdicts.
package suitetest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/chromium"
	"github.com/webpilot/webpilot/internal/suite"
)

//go:embed all:corpus
var corpus embed.FS

// Hostile is the corpus project whose tests each try a way out of the
// sandbox: a test that fails is an escape.
const Hostile = "hostile"

// Projects names the corpus projects (Hostile last).
func Projects() []string {
	entries, _ := fs.ReadDir(corpus, "corpus")
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != Hostile {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return append(out, Hostile)
}

// Files are a corpus project's files as an upload carries them.
func Files(name string) (map[string][]byte, error) {
	root := path.Join("corpus", name)
	files := map[string][]byte{}
	err := fs.WalkDir(corpus, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := corpus.ReadFile(p)
		files[strings.TrimPrefix(p, root+"/")] = b
		return err
	})
	return files, err
}

// Project is a corpus project.
func Project(name string) (suite.Project, error) {
	files, err := Files(name)
	if err != nil {
		return suite.Project{}, err
	}
	return suite.NewProject(files)
}

// BrowsersPath lays the system Chromium out under dir where an unmodified
// project's npx playwright test looks for its browsers (the registry's own
// downloads cannot be fetched here), for the runner installed in runner.
func BrowsersPath(dir, runner string) error {
	raw, err := os.ReadFile(filepath.Join(runner, "node_modules", "playwright-core", "browsers.json"))
	if err != nil {
		return err
	}
	var reg struct {
		Browsers []struct{ Name, Revision string }
	}
	if err := json.Unmarshal(raw, &reg); err != nil {
		return err
	}
	for _, b := range reg.Browsers {
		// Each of the runner's browsers is Debian's of the same kind:
		// headless runs take the headless shell, as at the owner's.
		var exe, debian string
		switch b.Name {
		case "chromium":
			exe, debian = filepath.Join(dir, "chromium-"+b.Revision, "chrome-linux", "chrome"), chromium.Full
		case "chromium-headless-shell":
			exe, debian = filepath.Join(dir, "chromium_headless_shell-"+b.Revision, "chrome-linux", "headless_shell"), chromium.HeadlessShell
		case "ffmpeg":
			// A config that records videos needs it; Debian's encodes the
			// runner's VP8 (setup.sh peer installs it).
			if _, err := os.Stat("/usr/bin/ffmpeg"); err != nil {
				continue
			}
			exe, debian = filepath.Join(dir, "ffmpeg-"+b.Revision, "ffmpeg-linux"), "/usr/bin/ffmpeg"
		default:
			continue
		}
		if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(debian, exe); err != nil && !os.IsExist(err) {
			return err
		}
	}
	return nil
}

// Outside runs the project as its owner does — npx playwright test with
// its own config, on the given projects (its Chromium ones) — in dir,
// with env added (BASE_URL and the secrets), and reads the verdicts. The
// runner's JSON report is left in dir as reference.json; extra are more
// of the runner's flags (--trace=on).
func Outside(ctx context.Context, p suite.Project, dir, runner, browsers string, env map[string]string, projects []string, extra ...string) (suite.RunReport, error) {
	if err := p.WriteTo(dir); err != nil {
		return suite.RunReport{}, err
	}
	cli := filepath.Join(runner, "node_modules", "@playwright", "test", "cli.js")
	if _, ok := p.File("package-lock.json"); ok {
		// The owner's npm ci, then the project's own @playwright/test.
		install := exec.CommandContext(ctx, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		install.Dir = dir
		install.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
		if out, err := install.CombinedOutput(); err != nil {
			return suite.RunReport{}, fmt.Errorf("npm ci: %w: %s", err, out)
		}
		cli = filepath.Join(dir, "node_modules", "@playwright", "test", "cli.js")
	} else if err := os.Symlink(filepath.Join(runner, "node_modules"), filepath.Join(dir, "node_modules")); err != nil && !os.IsExist(err) {
		return suite.RunReport{}, err
	}
	args := append([]string{cli, "test", "--reporter=json"}, extra...)
	for _, pr := range projects {
		if pr != "" {
			args = append(args, "--project="+pr)
		}
	}
	// Its Chromium at the priority the worker's runs get (as root it would
	// raise its threads above every other test's).
	line := append(chromium.Unraised(), "node")
	cmd := exec.CommandContext(ctx, line[0], append(line[1:], args...)...)
	cmd.Dir = dir
	report := filepath.Join(dir, "reference.json")
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_JSON_OUTPUT_NAME="+report, "PLAYWRIGHT_BROWSERS_PATH="+browsers, "CI=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	raw, err := os.ReadFile(report)
	if err != nil {
		return suite.RunReport{}, fmt.Errorf("the reference run reported nothing: %s", out.String())
	}
	return suite.ReadReport(raw, dir)
}

// CIArtifacts packs what a customer's CI keeps of a run Outside made in
// dir, as they would upload it: the JSON report and every trace.zip under
// test-results, in a .tar.gz under one folder.
func CIArtifacts(dir string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: "artifacts/" + name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	report, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		return nil, err
	}
	if err := add("report.json", report); err != nil {
		return nil, err
	}
	err = filepath.WalkDir(filepath.Join(dir, "test-results"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "trace.zip" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		return add(filepath.ToSlash(rel), b)
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ZipBomb is a zip of a test file and n entries of size zeros each, which
// share one compressed body: about 2 KB an entry, n*size inflated. It is
// what a hostile tenant uploads to run a reader of archives out of memory.
func ZipBomb(n, size int) ([]byte, error) {
	var one, out bytes.Buffer
	fw, err := flate.NewWriter(&one, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	zeros := make([]byte, size)
	_, _ = fw.Write(zeros)
	if err := fw.Close(); err != nil {
		return nil, err
	}
	crc := crc32.ChecksumIEEE(zeros)
	zw := zip.NewWriter(&out)
	if w, err := zw.Create("tests/a.spec.js"); err == nil {
		_, _ = w.Write([]byte("require('@playwright/test').test('t', () => {});\n"))
	}
	for i := range n {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("data/%04d.json", i), Method: zip.Deflate, CRC32: crc,
			CompressedSize64: uint64(one.Len()), UncompressedSize64: uint64(size)})
		if err != nil {
			return nil, err
		}
		_, _ = w.Write(one.Bytes())
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// ZipHolds says whether b holds s, as bytes or inside a zip it is, or a
// zip nested in one (a blob report holds its traces' zips), to a few
// levels down: where a report may carry a secret.
func ZipHolds(t testing.TB, b []byte, s string) bool {
	t.Helper()
	return zipHolds(t, b, s, 0)
}

func zipHolds(t testing.TB, b []byte, s string, depth int) bool {
	if bytes.Contains(b, []byte(s)) {
		return true
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || depth > 3 {
		return false
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		c, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if zipHolds(t, c, s, depth+1) {
			t.Logf("%s holds it", f.Name)
			return true
		}
	}
	return false
}
