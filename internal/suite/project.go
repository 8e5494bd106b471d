package suite

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Limits of an uploaded project.
const (
	MaxProjectFiles = 2000
	MaxProjectBytes = 20 << 20 // all files together, uncompressed
	MaxFileBytes    = 2 << 20
	maxPathLen      = 300
)

// File is one file of a project, at its path relative to the project's
// root (slash-separated).
type File struct {
	Path    string
	Content []byte
}

// Project is a customer's @playwright/test project exactly as uploaded:
// specs, page objects, fixtures, helpers, data, its playwright.config and
// package.json. Nothing in it is rewritten; webpilot runs it as it is.
type Project struct {
	Files []File // sorted by path
}

// ProjectError says what is wrong with an upload, naming the file.
type ProjectError struct {
	Path    string // the offending file ("" for the upload as a whole)
	Problem string
}

func (e *ProjectError) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

func problem(p, format string, args ...any) error {
	return &ProjectError{Path: p, Problem: fmt.Sprintf(format, args...)}
}

// specFile is how the runner's default testMatch names a test file.
var specFile = regexp.MustCompile(`(^|/)[^/]*\.(spec|test)\.(c|m)?(j|t)sx?$`)

// IsSpec reports whether the runner would take the file at p for a test
// file by default.
func IsSpec(p string) bool { return specFile.MatchString(p) }

// skipped are what an upload may carry but a project never needs: they
// are left out, not refused.
func skipped(p string) bool {
	for _, part := range strings.Split(p, "/") {
		switch part {
		case ".git", "test-results", "playwright-report", "blob-report", ".DS_Store", "__MACOSX":
			return true
		}
	}
	return false
}

// ReadArchive reads an uploaded archive: a tar (gzip-compressed or not) or
// a zip. A single top-level directory holding everything is taken as the
// project's root.
func ReadArchive(data []byte) (Project, error) {
	files, err := readArchive(data, projectFile, projectLimits)
	if err != nil {
		return Project{}, err
	}
	return NewProject(stripRoot(files))
}

// readArchive reads the files of a tar (gzip-compressed or not) or zip
// that keep takes, within the project's limits.
func readArchive(data []byte, keep func(string) bool, lim intakeLimits) (map[string][]byte, error) {
	in := &intake{files: map[string][]byte{}, keep: keep, lim: lim}
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return readZip(data, in)
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, problem("", "the archive is not a valid gzip file: %v", err)
		}
		// Skipped entries and headers are inflated too: the stream as a
		// whole is bounded, not only what is kept.
		return readTar(&inflateCap{r: zr, left: 2 * int64(lim.totalBytes), limit: 2 * int64(lim.totalBytes)}, in)
	case len(data) > 262 && string(data[257:262]) == "ustar":
		return readTar(bytes.NewReader(data), in)
	}
	return nil, problem("", "the upload is not a .tar, .tar.gz or .zip archive")
}

// projectFile says an upload's file belongs to the project.
func projectFile(name string) bool { return !skipped(path.Clean(strings.TrimPrefix(name, "./"))) }

// intake gathers an archive's files as they are inflated, counting the
// running total against the project's limits, so that no more than the
// limit is ever held: an archive's headers may claim any sizes, and a few
// MB compressed can inflate to gigabytes.
type intake struct {
	files map[string][]byte
	total int
	// keep says which files are wanted: the others are never read.
	keep func(name string) bool
	// lim bounds what is kept.
	lim intakeLimits
}

// intakeLimits bound what an upload's intake holds.
type intakeLimits struct {
	files, fileBytes, totalBytes int
}

// projectLimits are an uploaded project's.
var projectLimits = intakeLimits{files: MaxProjectFiles, fileBytes: MaxFileBytes, totalBytes: MaxProjectBytes}

func (in *intake) add(name string, r io.Reader) error {
	if !in.keep(name) {
		return nil // never needed, never read
	}
	if len(in.files) >= in.lim.files {
		return problem(name, "the upload has more than %d files", in.lim.files)
	}
	left := in.lim.totalBytes - in.total
	b, err := io.ReadAll(io.LimitReader(r, int64(min(left, in.lim.fileBytes))+1))
	if err != nil {
		return problem(name, "cannot be read: %v", err)
	}
	if len(b) > in.lim.fileBytes {
		return problem(name, "is more than the %d bytes a file may have", in.lim.fileBytes)
	}
	if len(b) > left {
		return problem("", "the upload's files hold more than %d bytes uncompressed", in.lim.totalBytes)
	}
	in.total += len(b)
	in.files[name] = b
	return nil
}

func readTar(r io.Reader, in *intake) (map[string][]byte, error) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return in.files, nil
		}
		if err != nil {
			return nil, problem("", "the archive cannot be read: %v", err)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, problem(h.Name, "links are not accepted; upload the file itself")
		default:
			return nil, problem(h.Name, "only regular files and directories are accepted")
		}
		if h.Size > int64(in.lim.fileBytes) && in.keep(h.Name) {
			return nil, problem(h.Name, "is %d bytes, more than the %d a file may have", h.Size, in.lim.fileBytes)
		}
		if err := in.add(h.Name, tr); err != nil {
			return nil, err
		}
	}
}

// inflateCap fails a decompressed stream that goes on past left bytes.
type inflateCap struct {
	r           io.Reader
	left, limit int64
}

func (c *inflateCap) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, problem("", "the archive inflates to more than %d bytes", c.limit)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func readZip(data []byte, in *intake) (map[string][]byte, error) {
	if n, err := zipEntries(bytes.NewReader(data), int64(len(data)), 4*in.lim.files); err != nil {
		return nil, problem("", "the archive is not a valid zip file: %v", err)
	} else if n > 4*in.lim.files {
		// Counted before the directory is read into memory.
		return nil, problem("", "the archive lists more than %d entries", 4*in.lim.files)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, problem("", "the archive is not a valid zip file: %v", err)
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if f.Mode()&os.ModeSymlink != 0 {
			return nil, problem(f.Name, "links are not accepted; upload the file itself")
		}
		if !f.Mode().IsRegular() {
			return nil, problem(f.Name, "only regular files and directories are accepted")
		}
		if f.UncompressedSize64 > uint64(in.lim.fileBytes) && in.keep(f.Name) {
			return nil, problem(f.Name, "is %d bytes, more than the %d a file may have", f.UncompressedSize64, in.lim.fileBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, problem(f.Name, "cannot be read: %v", err)
		}
		err = in.add(f.Name, rc)
		_ = rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return in.files, nil
}

// ReadFiles takes the files of an upload's files form, by path, holding no
// more than the project's limits allow.
func ReadFiles(form map[string]string) (Project, error) {
	in := intake{files: make(map[string][]byte, min(len(form), MaxProjectFiles)), keep: projectFile, lim: projectLimits}
	for name, content := range form {
		if err := in.add(name, strings.NewReader(content)); err != nil {
			return Project{}, err
		}
	}
	return NewProject(in.files)
}

// stripRoot takes a single top-level directory holding every file (how an
// archive of a folder comes) for the project's root.
func stripRoot(files map[string][]byte) map[string][]byte {
	root := ""
	for p := range files {
		p = strings.TrimPrefix(p, "./")
		first, rest, ok := strings.Cut(p, "/")
		if !ok || rest == "" || (root != "" && first != root) {
			return files
		}
		root = first
	}
	if root == "" {
		return files
	}
	out := make(map[string][]byte, len(files))
	for p, b := range files {
		out[strings.TrimPrefix(strings.TrimPrefix(p, "./"), root+"/")] = b
	}
	return out
}

// NewProject checks a set of files and makes a project of them: relative,
// clean paths; within the limits; at least one test file; no node_modules
// (dependencies come from package.json).
func NewProject(files map[string][]byte) (Project, error) {
	var p Project
	total := 0
	for name, content := range files {
		clean := path.Clean(strings.TrimPrefix(strings.ReplaceAll(name, `\`, "/"), "./"))
		switch {
		case name == "" || clean == "." || strings.HasPrefix(name, "/") || filepath.IsAbs(name):
			return Project{}, problem(name, "a path must be relative to the project's root")
		case clean == ".." || strings.HasPrefix(clean, "../") || slices.Contains(strings.Split(name, "/"), ".."):
			return Project{}, problem(name, "a path may not leave the project (..)")
		case len(clean) > maxPathLen:
			return Project{}, problem(name[:60]+"…", "the path is longer than %d characters", maxPathLen)
		case strings.ContainsAny(clean, "\x00\n\r"):
			return Project{}, problem(name, "the path holds control characters")
		case skipped(clean):
			continue
		case clean == "node_modules" || strings.HasPrefix(clean, "node_modules/") || strings.Contains(clean, "/node_modules/"):
			return Project{}, problem(name, "node_modules is not uploaded: dependencies are installed from package.json and its lockfile")
		case len(content) > MaxFileBytes:
			return Project{}, problem(name, "is %d bytes, more than the %d a file may have", len(content), MaxFileBytes)
		}
		total += len(content)
		p.Files = append(p.Files, File{Path: clean, Content: content})
	}
	switch {
	case len(p.Files) > MaxProjectFiles:
		return Project{}, problem("", "the project has %d files, more than %d", len(p.Files), MaxProjectFiles)
	case total > MaxProjectBytes:
		return Project{}, problem("", "the project's files hold %d bytes, more than %d", total, MaxProjectBytes)
	}
	slices.SortFunc(p.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(p.Files); i++ {
		if p.Files[i].Path == p.Files[i-1].Path {
			return Project{}, problem(p.Files[i].Path, "appears twice")
		}
	}
	if !slices.ContainsFunc(p.Files, func(f File) bool { return IsSpec(f.Path) }) {
		return Project{}, problem("", "no test file: the runner takes files named *.spec.ts, *.test.js and the like")
	}
	return p, nil
}

// Digest is the project's content address: the same files give the same
// digest, whatever order or archive they came in.
func (p Project) Digest() string {
	h := sha256.New()
	var n [8]byte
	for _, f := range p.Files {
		binary.BigEndian.PutUint64(n[:], uint64(len(f.Path)))
		h.Write(n[:])
		h.Write([]byte(f.Path))
		binary.BigEndian.PutUint64(n[:], uint64(len(f.Content)))
		h.Write(n[:])
		h.Write(f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Size is the bytes of all files.
func (p Project) Size() int {
	n := 0
	for _, f := range p.Files {
		n += len(f.Content)
	}
	return n
}

// File returns the file at path p.
func (p Project) File(name string) (File, bool) {
	i, ok := slices.BinarySearchFunc(p.Files, name, func(f File, n string) int { return strings.Compare(f.Path, n) })
	if !ok {
		return File{}, false
	}
	return p.Files[i], true
}

// Archive packs the project as a gzip-compressed tar, in path order with
// no timestamps, so the same project packs to the same bytes.
func (p Project) Archive() ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range p.Files {
		if err := tw.WriteHeader(&tar.Header{Name: f.Path, Mode: 0o644, Size: int64(len(f.Content)), Typeflag: tar.TypeReg,
			Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteTo writes the project's files under dir.
func (p Project) WriteTo(dir string) error {
	for _, f := range p.Files {
		full := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.Content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
