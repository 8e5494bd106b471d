package suite

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

type entry struct {
	name, body string
	link       bool
}

func tarOf(t *testing.T, gz bool, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w *tar.Writer
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = tar.NewWriter(zw)
	} else {
		w = tar.NewWriter(&buf)
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.link {
			h = &tar.Header{Name: e.name, Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if !e.link {
			_, _ = w.Write([]byte(e.body))
		}
	}
	_ = w.Close()
	if zw != nil {
		_ = zw.Close()
	}
	return buf.Bytes()
}

func zipOf(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, e := range entries {
		f, err := w.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte(e.body))
	}
	_ = w.Close()
	return buf.Bytes()
}

var shop = []entry{
	{name: "package.json", body: `{"devDependencies": {"@playwright/test": "^1.52.0"}}`},
	{name: "playwright.config.ts", body: "export default {}"},
	{name: "pages/cart.page.ts", body: "export class CartPage {}"},
	{name: "tests/cart.spec.ts", body: "import { test } from '@playwright/test';"},
}

func withRoot(root string, es []entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		e.name = root + e.name
		out[i] = e
	}
	return out
}

func TestReadArchive(t *testing.T) {
	t.Parallel()
	want := ""
	for _, tc := range []struct {
		name string
		data func(t *testing.T) []byte
	}{
		{"tar.gz", func(t *testing.T) []byte { return tarOf(t, true, shop...) }},
		{"tar", func(t *testing.T) []byte { return tarOf(t, false, shop...) }},
		{"zip", func(t *testing.T) []byte { return zipOf(t, shop...) }},
		{"zip of a folder, files in another order", func(t *testing.T) []byte {
			es := withRoot("shop-tests/", shop)
			es[0], es[3] = es[3], es[0]
			return zipOf(t, es...)
		}},
		{"tar.gz with the repository's own clutter", func(t *testing.T) []byte {
			return tarOf(t, true, append(withRoot("./", shop), entry{name: ".git/HEAD", body: "ref"},
				entry{name: "test-results/.last-run.json", body: "{}"})...)
		}},
	} {
		p, err := ReadArchive(tc.data(t))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(p.Files) != 4 || p.Files[0].Path != "package.json" || p.Files[3].Path != "tests/cart.spec.ts" {
			t.Fatalf("%s: files %v", tc.name, paths(p))
		}
		if want == "" {
			want = p.Digest()
		} else if p.Digest() != want {
			t.Fatalf("%s: digest %s differs from the same files' %s", tc.name, p.Digest(), want)
		}
	}
}

func paths(p Project) []string {
	var out []string
	for _, f := range p.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestAnUploadThatCannotBeAProjectNamesItsFile(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", MaxFileBytes+1)
	for _, tc := range []struct {
		name     string
		data     []byte
		path     string // the file the error names
		contains string
	}{
		{"not an archive", []byte("hello"), "", "not a .tar"},
		{"a link", tarOf(t, true, append(shop, entry{name: "secrets", link: true})...), "secrets", "links"},
		{"leaving the project", tarOf(t, false, append(shop, entry{name: "../evil.spec.ts", body: "x"})...), "../evil.spec.ts", "may not leave"},
		{"an absolute path", tarOf(t, false, append(shop, entry{name: "/etc/cron.d/x", body: "x"})...), "/etc/cron.d/x", "relative"},
		{"node_modules", zipOf(t, append(shop, entry{name: "node_modules/left-pad/index.js", body: "x"})...), "node_modules/left-pad/index.js", "package.json"},
		{"a file too large", tarOf(t, true, append(shop, entry{name: "data/huge.json", body: big})...), "data/huge.json", "more than"},
		{"no test file", zipOf(t, shop[:3]...), "", "no test file"},
		{"the same file twice", tarOf(t, false, append(shop, entry{name: "tests/./cart.spec.ts", body: "y"})...), "tests/cart.spec.ts", "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadArchive(tc.data)
			var pe *ProjectError
			if !errors.As(err, &pe) || pe.Path != tc.path || !strings.Contains(pe.Problem, tc.contains) {
				t.Fatalf("error %v (%#v), want one naming %q and saying %q", err, pe, tc.path, tc.contains)
			}
		})
	}
}

func TestAProjectPacksToTheSameBytes(t *testing.T) {
	t.Parallel()
	p, err := ReadArchive(zipOf(t, shop...))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Archive()
	b, _ := p.Archive()
	if !bytes.Equal(a, b) {
		t.Fatal("packing the same project twice gave different bytes")
	}
	again, err := ReadArchive(a)
	if err != nil || again.Digest() != p.Digest() {
		t.Fatalf("the packed project reads back as %v (%v)", paths(again), err)
	}
}

// bomb is an archive of n entries of size zeros each: a few MB that
// inflate to n*size. The zip's entries share one compressed body; the
// gzip's are one tar member compressed once and repeated (gzip readers
// read concatenated members as one stream).
func bomb(t *testing.T, kind string, n, size int) []byte {
	t.Helper()
	var body bytes.Buffer
	switch kind {
	case "zip":
		zw := zip.NewWriter(&body)
		var one bytes.Buffer
		fw, _ := flateWriter(&one)
		_, _ = fw.Write(make([]byte, size))
		_ = fw.Close()
		crc := crc32.ChecksumIEEE(make([]byte, size))
		for i := range n {
			w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("data/%04d.json", i), Method: zip.Deflate, CRC32: crc,
				CompressedSize64: uint64(one.Len()), UncompressedSize64: uint64(size)})
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write(one.Bytes())
		}
		_ = zw.Close()
	case "tar.gz":
		var member bytes.Buffer
		gz := gzip.NewWriter(&member)
		tw := tar.NewWriter(gz)
		_ = tw.WriteHeader(&tar.Header{Name: "data/zeros.json", Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg})
		_, _ = tw.Write(make([]byte, size))
		_ = tw.Flush()
		_ = gz.Close()
		for range n {
			body.Write(member.Bytes())
		}
	}
	return body.Bytes()
}

func flateWriter(w io.Writer) (io.WriteCloser, error) {
	return flate.NewWriter(w, flate.BestCompression)
}

// TestAnArchiveBombIsRefusedWithoutInflatingIt: an archive of 2,000
// entries of 2 MiB of zeros (4 GB inflated from a few MB), as a zip or a
// gzip-compressed tar, is refused as soon as the project's limit is
// passed, having allocated little more than the limit.
func TestAnArchiveBombIsRefusedWithoutInflatingIt(t *testing.T) {
	for _, kind := range []string{"zip", "tar.gz"} {
		t.Run(kind, func(t *testing.T) {
			data := bomb(t, kind, 2000, MaxFileBytes)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := ReadArchive(data)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			var pe *ProjectError
			if !errors.As(err, &pe) || !strings.Contains(pe.Problem, "more than") {
				t.Fatalf("error %v, want the project's limit", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*MaxProjectBytes {
				t.Errorf("allocated %d MB reading a %d KB archive", alloc>>20, len(data)>>10)
			}
			if took > 5*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

// TestAZipIsCountedByItsDirectoryNotItsClaim: a zip whose end record
// claims 100 entries while its directory holds 65,636 (65,636 is 100
// modulo 65,536, all a reader checks) was read whole into memory, as an
// upload and as a trace. It is refused by its directory's own count,
// without being read into memory.
func TestAZipIsCountedByItsDirectoryNotItsClaim(t *testing.T) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := range 65_636 {
		if _, err := w.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("%x", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The writer adds a zip64 record for so many entries; a hostile one
	// writes the plain end record alone, claiming 100.
	data := buf.Bytes()
	eocd := bytes.LastIndex(data, []byte("PK\x05\x06"))
	z64 := eocd - 76
	if !bytes.HasPrefix(data[z64:], []byte("PK\x06\x06")) {
		t.Fatal("no zip64 end record")
	}
	end := append([]byte(nil), data[eocd:]...)
	binary.LittleEndian.PutUint16(end[8:], 100)
	binary.LittleEndian.PutUint16(end[10:], 100)
	binary.LittleEndian.PutUint32(end[12:], uint32(binary.LittleEndian.Uint64(data[z64+40:])))
	binary.LittleEndian.PutUint32(end[16:], uint32(binary.LittleEndian.Uint64(data[z64+48:])))
	data = append(data[:z64:z64], end...)
	if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err != nil || len(zr.File) != 65_636 {
		t.Fatalf("a reader of it: %v", err)
	}
	if n, err := zipEntries(bytes.NewReader(data), int64(len(data)), maxTraceEntries); err != nil || n <= maxTraceEntries {
		t.Fatalf("counted %d (%v)", n, err)
	}
	var pe *ProjectError
	if _, err := ReadArchive(data); !errors.As(err, &pe) || !strings.Contains(pe.Problem, "lists more than") {
		t.Fatalf("an upload of it: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "trace.zip"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTrace(dir, "trace.zip", "/work"); err == nil || !strings.Contains(err.Error(), "more than the 20000 a trace may") {
		t.Fatalf("as a trace: %v", err)
	}
	// A zip as the runner writes it is counted as it is.
	small := zipOf(t, entry{name: "a", body: "1"}, entry{name: "b/c", body: "2"})
	if n, err := zipEntries(bytes.NewReader(small), int64(len(small)), 10); err != nil || n != 2 {
		t.Fatalf("a zip of 2: %d (%v)", n, err)
	}
}
