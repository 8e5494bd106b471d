package suite

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/sandbox"
)

// A run's reports in the runner's own formats: each file's run writes
// Playwright's blob report beside its JSON one, and a project run's blobs
// are merged by the runner's merge-reports into its junit XML and its
// html report, as a sharded run's are in CI. Nothing of them is written
// by webpilot.

// blobPath is where a run writes its blob report, inside its directory.
const blobPath = ".webpilot/blob.zip"

// MaxBlobBytes bounds a file's blob report (its tests' traces and
// attachments): a larger one is left out of the project's reports.
const MaxBlobBytes = 64 << 20

// Bounds on what a merge leaves: the junit XML, and the html report's
// files (its trace viewer, its tests' traces and screenshots).
const (
	maxJUnitBytes = 16 << 20
	maxHTMLBytes  = 192 << 20
	maxHTMLFiles  = 5000
)

// mergeWall bounds a merge of a project's blobs.
const mergeWall = 5 * time.Minute

// mergeConfig is the configuration merge-reports reads: only where its
// reporters write.
const mergeConfig = `module.exports = {
  reporter: [['junit', { outputFile: 'out/junit.xml' }], ['html', { outputFolder: 'out/html', open: 'never' }]],
};
`

// Reports are a project run's reports as the runner writes them.
type Reports struct {
	// JUnit is the junit reporter's XML.
	JUnit []byte
	// HTML is the html reporter's folder, zipped (index.html at its top).
	HTML []byte
}

// MergeReports merges the blob reports of a project's file runs with the
// runner's merge-reports into its junit XML and html report. It runs in
// the sandbox with no network: the blobs hold what the customer's tests
// wrote.
func (r ProjectRunner) MergeReports(ctx context.Context, blobs [][]byte) (Reports, error) {
	if r.Sandbox == nil {
		return Reports{}, sandbox.ErrUnavailable
	}
	if len(blobs) == 0 {
		return Reports{}, errors.New("no file's run left a blob report")
	}
	dir, err := r.Sandbox.NewRunDir()
	if err != nil {
		return Reports{}, err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o755); err != nil {
		return Reports{}, err
	}
	for i, b := range blobs {
		if err := os.WriteFile(filepath.Join(dir, "blobs", fmt.Sprintf("report-%04d.zip", i+1)), b, 0o644); err != nil {
			return Reports{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "merge.config.cjs"), []byte(mergeConfig), 0o644); err != nil {
		return Reports{}, err
	}
	if err := os.Symlink(sandbox.RunnerDir+"/node_modules", filepath.Join(dir, "node_modules")); err != nil {
		return Reports{}, err
	}
	out := &tail{max: outputTail}
	res, err := r.Sandbox.Run(ctx, sandbox.Run{Dir: dir, Wall: mergeWall, Stdout: out, Stderr: out,
		Env:  map[string]string{"CI": "1", "FORCE_COLOR": "0", "PLAYWRIGHT_HTML_OPEN": "never"},
		Args: []string{"/usr/bin/node", sandbox.RunnerDir + "/node_modules/@playwright/test/cli.js", "merge-reports", "--config", "merge.config.cjs", "blobs"}})
	if err != nil {
		return Reports{}, fmt.Errorf("merge the reports: %w", err)
	}
	if res.Limit != "" {
		return Reports{}, fmt.Errorf("merging the reports hit the sandbox's %s limit: %s", res.Limit, res.Reason)
	}
	var rep Reports
	if rep.JUnit, err = sandbox.ReadResult(ctx, dir, "out/junit.xml", maxJUnitBytes); err != nil {
		return Reports{}, fmt.Errorf("the merge wrote no junit report (exit %d: %s): %w", res.ExitCode, lastBytes(stripANSI(out.String()), 600), err)
	}
	if rep.HTML, err = zipResults(ctx, dir, "out/html"); err != nil {
		return Reports{}, fmt.Errorf("the html report: %w", err)
	}
	return rep, nil
}

// zipResults zips the regular files under rel of a run's directory, each
// read as sandbox.OpenResult allows, within the html report's bounds.
func zipResults(ctx context.Context, dir, rel string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var total int64
	files := 0
	root := filepath.Join(dir, filepath.FromSlash(rel))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories are walked; links and the like are left out
		}
		if files++; files > maxHTMLFiles {
			return fmt.Errorf("more than %d files", maxHTMLFiles)
		}
		name, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f, size, err := sandbox.OpenResult(dir, path.Join(rel, filepath.ToSlash(name)), maxHTMLBytes-total)
		if err != nil {
			return err
		}
		defer f.Close()
		total += size
		w, err := zw.Create(filepath.ToSlash(name))
		if err != nil {
			return err
		}
		_, err = io.CopyN(w, f, size)
		if err == nil {
			err = ctx.Err()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Redaction of what a run's zips hold: a test's trace records what it
// typed and what the page showed, its secrets among them.

// Bounds on what redaction unpacks: a blob or a trace is the customer's
// tests' output, and an attachment may be a zip of anything.
const (
	maxRedactedBytes = 512 << 20
	maxZipDepth      = 3
)

// ErrRedactionBound is a zip whose content exceeds what redaction unpacks.
var ErrRedactionBound = errors.New("the archive unpacks to more than redaction reads")

// RedactZip rewrites a zip (a blob report, a trace) with redact applied
// to every entry but pictures and videos, and to the zips inside it.
func RedactZip(b []byte, redact func(string) string) ([]byte, error) {
	budget := int64(maxRedactedBytes)
	return redactZip(b, redact, &budget, 0)
}

func redactZip(b []byte, redact func(string) string, budget *int64, depth int) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		content, err := io.ReadAll(io.LimitReader(rc, *budget+1))
		_ = rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if *budget -= int64(len(content)); *budget < 0 {
			return nil, ErrRedactionBound
		}
		switch ext := strings.ToLower(path.Ext(f.Name)); {
		case ext == ".zip" && depth < maxZipDepth:
			if inner, err := redactZip(content, redact, budget, depth+1); err == nil {
				content = inner
			} else if errors.Is(err, ErrRedactionBound) {
				return nil, err
			} else {
				content = []byte(redact(string(content))) // not a zip after all
			}
		case ext == ".png", ext == ".jpg", ext == ".jpeg", ext == ".webm", ext == ".webp", ext == ".gif":
		default:
			content = []byte(redact(string(content)))
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(content); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Bounds on the failing tests' traces a run keeps for download.
const (
	maxTraceZip   = 32 << 20
	maxTraceZips  = 96 << 20
	keptTraceZips = 50
)

// keepFailingTraces reads the failing tests' traces (as the runner wrote
// them) into TraceZip while the run's directory exists, within bounds.
func (rep *RunReport) keepFailingTraces(ctx context.Context) {
	var total int64
	kept := 0
	for i := range rep.Tests {
		t := &rep.Tests[i]
		if t.Trace == "" || t.Status == StatusPassed || t.Status == StatusSkipped || t.Status == StatusNotRun || kept == keptTraceZips {
			continue
		}
		b, err := sandbox.ReadResult(ctx, t.RunDir, t.Trace, min(maxTraceZip, maxTraceZips-total))
		if err != nil {
			continue
		}
		t.TraceZip, total, kept = b, total+int64(len(b)), kept+1
	}
}

// Artifact names of a project run's reports.
const (
	// BlobArtifact is a file job's blob report.
	BlobArtifact = "report.blob.zip"
	// JUnitArtifact is a project run's junit XML.
	JUnitArtifact = "junit.xml"
	// HTMLArtifact is a project run's html report, zipped.
	HTMLArtifact = "playwright-report.zip"
)

// RunReports is where a project run's reports are: each an artifact of a
// job of the run (GET /v1/jobs/{job}/artifacts/{name}).
type RunReports struct {
	// JUnit and HTML name the run's own artifacts (empty when the merge
	// made none: Problem says why).
	JUnit string `json:"junit,omitempty"`
	HTML  string `json:"html,omitempty"`
	// Traces are the failing tests' traces (npx playwright show-trace
	// opens each), artifacts of their files' jobs.
	Traces []TraceDownload `json:"traces,omitempty"`
	// Problem says what of the reports is missing and why.
	Problem string `json:"problem,omitempty"`
	// Tests counts the run's tests by the runner's verdict, over Files
	// test files (its parts' jobs hold each test's).
	Tests map[TestStatus]int `json:"tests,omitempty"`
	Files int                `json:"files,omitempty"`
}

// TraceDownload is one failing test's trace.
type TraceDownload struct {
	Test     string `json:"test"` // file › describe › title
	File     string `json:"file"`
	Line     int    `json:"line"`
	JobID    string `json:"job_id"`
	Artifact string `json:"artifact"`
}
