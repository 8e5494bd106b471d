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
	"github.com/webpilot/webpilot/store"
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
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(string(body)))
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
