package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/store"
)

func importBody(t testing.TB, files ...string) []byte {
	t.Helper()
	type file struct {
		Name    string `json:"name"`
		Content string `json:"content"`
	}
	var req struct {
		Files []file `json:"files"`
	}
	for i, c := range files {
		req.Files = append(req.Files, file{Name: fmt.Sprintf("f%d.spec.ts", i), Content: c})
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestADeepImportDoesNotKillTheDispatcher: the 200,000-deep spec that once
// ended the process (a Go stack overflow cannot be recovered) and the
// 40,000 nested arrows that held it 47 s are each a quick 400 naming the
// file and line, and afterwards the service is ready and takes jobs.
func TestADeepImportDoesNotKillTheDispatcher(t *testing.T) {
	t.Parallel()
	var st *store.Store
	ready := []api.ReadyCheck{{Name: "postgres", Check: func(ctx context.Context) error { return st.Ping(ctx) }}}
	base, st, key := abuseServer(t, api.Config{Ready: ready}, api.DefaultServerTimeouts())
	for name, src := range map[string]string{
		"200,000 !":      "test('x', async ({ page }) => { const a = " + strings.Repeat("!", 200000) + "'x'; });",
		"(()=> x 40,000": strings.Repeat("(()=>", 40000) + "1" + strings.Repeat(")", 40000),
	} {
		code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, src))
		if code != http.StatusBadRequest || !strings.Contains(body, `files[0] (f0.spec.ts) line 1`) || !strings.Contains(body, "nests deeper than") {
			t.Fatalf("%s: %d %s", name, code, body)
		}
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz after the deep imports: %v %v", resp, err)
	}
	resp.Body.Close()
	if job := submitSmall(t, base, key); job.ID == "" {
		t.Fatal("no job after the deep imports")
	}
}

func postBody(t testing.TB, url, key string, body []byte) (int, string) {
	t.Helper()
	return send(t, http.MethodPost, url, key, body)
}

// send makes one request with the tenant's key and answers its status and
// body.
func send(t testing.TB, method, url, key string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// importPieces are the fragments FuzzImport builds specs from: each is
// repeated up to thousands of times, so the fuzzer explores deep and long
// inputs of every construct that nests, mixed.
var importPieces = []string{
	"!", "(", ")", "[", "]", "{", "}", "`${", "}`", "()=>", "a=>", "if(a)", "else ", "return ", "function(){",
	"a?", ":", "=", "**", ".b", "()", "[0]", "typeof ", "new ", "await ", "keyof ", "\n", ";", ",", "'s'",
	"/r[(]/", "a", " + ", "- ", "test('t', async ({ page }) => {", "await page.getByRole('button', { name: /x/i }).click();",
	"expect(page).toHaveURL(/y/);", "});", "class A{", "x:", "do ", "while(a)", "// c\n", "/* c */", "`t`", "\\",
}

// FuzzImport: whatever the spec files, POST /v1/tests/import answers 201 or
// a 4xx, and never takes the process down. The input is a program: pairs
// of (piece, repetitions), repetitions scaled up to 4,096.
func FuzzImport(f *testing.F) {
	// Deep recursion that got past the bounds would overflow this smaller
	// stack quickly instead of after a gigabyte.
	debug.SetMaxStack(128 << 20)
	srv, key, _ := fuzzServerWith(f, api.Config{AdminToken: "admin", MaxBody: 1 << 20})
	f.Add([]byte{0, 255, 0, 255, 0, 255, 31, 1})
	f.Add([]byte{9, 255, 31, 1})
	f.Add([]byte{11, 200, 13, 1, 14, 200})
	f.Add([]byte{34, 1, 35, 100, 36, 3, 37, 1})
	f.Add([]byte{16, 128, 17, 128, 19, 128})
	f.Add([]byte{26, 255, 32, 1, 27, 255})
	f.Fuzz(func(t *testing.T, program []byte) {
		var b strings.Builder
		for i := 0; i+1 < len(program) && b.Len() < 300<<10; i += 2 {
			piece := importPieces[int(program[i])%len(importPieces)]
			b.WriteString(strings.Repeat(piece, 1+int(program[i+1])*16))
		}
		src := b.String()
		if len(src) > 300<<10 {
			src = src[:300<<10]
		}
		if code, body := postBody(t, srv.URL+"/v1/tests/import", key, importBody(t, src)); code >= 500 || code < 200 {
			t.Fatalf("import of %d bytes answered %d: %.300s", len(src), code, body)
		}
	})
}

// manyTests is one spec file holding n tests.
func manyTests(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "test('%s %d', async ({ page }) => { await page.goto('http://127.0.0.1:1/'); await page.getByRole('button', { name: 'Go' }).click(); });\n", prefix, i)
	}
	return b.String()
}

// TestImportsAndBulkJobsAreBounded: one import, a tenant's imports per
// minute, a suite's size and a bulk job's fan-out each have a limit that
// answers a clear 400 or 429, and a suite run's budget bounds how many
// tests it may run (it once made 8,488 children on one credit).
func TestImportsAndBulkJobsAreBounded(t *testing.T) {
	t.Parallel()
	t.Run("tests per import", func(t *testing.T) {
		t.Parallel()
		base, _, key := abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
		code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests("t", api.DefaultMaxImportTests+1)))
		if code != http.StatusBadRequest || !strings.Contains(body, `"field": "files"`) || !strings.Contains(body, "one import takes at most 500") {
			t.Fatalf("%d %s", code, body)
		}
	})
	t.Run("imports per minute", func(t *testing.T) {
		t.Parallel()
		base, _, key := abuseServer(t, api.Config{ImportsPerMinute: 3}, api.DefaultServerTimeouts())
		for i := range 4 {
			code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests(fmt.Sprint("batch", i), 1)))
			if want := map[bool]int{true: 201, false: 429}[i < 3]; code != want {
				t.Fatalf("import %d: %d %s", i+1, code, body)
			}
		}
	})
	t.Run("tests per suite", func(t *testing.T) {
		t.Parallel()
		base, _, key := abuseServer(t, api.Config{MaxSuiteTests: 3}, api.DefaultServerTimeouts())
		if code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests("a", 2))); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
		code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests("b", 2)))
		if code != http.StatusBadRequest || !strings.Contains(body, "the suite would hold 4 tests, above its limit of 3") {
			t.Fatalf("%d %s", code, body)
		}
		// Nothing of the refused import was stored; a new version of a
		// test already there still fits.
		if code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests("a", 2))); code != 201 {
			t.Fatalf("re-import: %d %s", code, body)
		}
	})
	t.Run("a bulk job's fan-out and budget", func(t *testing.T) {
		t.Parallel()
		base, _, key := abuseServer(t, api.Config{MaxBulkTests: 2}, api.DefaultServerTimeouts())
		if code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests("s", 3))); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
		code, body := postBody(t, base+"/v1/suites/run", key, []byte(`{}`))
		if code != http.StatusBadRequest || !strings.Contains(body, "selects 3 tests; one bulk job runs at most 2") {
			t.Fatalf("fan-out: %d %s", code, body)
		}
		base, _, key = abuseServer(t, api.Config{}, api.DefaultServerTimeouts())
		if code, body := postBody(t, base+"/v1/tests/import", key, importBody(t, manyTests("s", 3))); code != 201 {
			t.Fatalf("%d %s", code, body)
		}
		code, body = postBody(t, base+"/v1/suites/run", key, []byte(`{"options":{"max_credits":0.02}}`))
		if code != http.StatusBadRequest || !strings.Contains(body, `"field": "suite.options.max_credits"`) || !strings.Contains(body, "0.02 credits cover at most 2 tests") {
			t.Fatalf("budget: %d %s", code, body)
		}
		if code, body := postBody(t, base+"/v1/suites/run", key, []byte(`{"options":{"max_credits":0.03}}`)); code != http.StatusAccepted {
			t.Fatalf("a budget that covers them: %d %s", code, body)
		}
	})
}
