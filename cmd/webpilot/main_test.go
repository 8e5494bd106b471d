package main

import (
	"github.com/webpilot/webpilot/client"

	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/jobs"
)

// TestWatchFailsWhenTheStreamEndsBeforeTheJob: a stream cut before the
// job's end is not a success.
func TestWatchFailsWhenTheStreamEndsBeforeTheJob(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: state\ndata: {\"state\":\"running\"}\n\n")
	}))
	defer srv.Close()
	var out bytes.Buffer
	err := watch(&conn{base: srv.URL, http: srv.Client()}, "key", "job-1", &out, false)
	if err == nil || !strings.Contains(err.Error(), "ended before the job did") || !strings.Contains(err.Error(), "running") {
		t.Fatalf("watch of a cut stream returned %v", err)
	}
}

// TestAnUnreachableDispatcherSaysWhatToDo: the error names the address
// tried and the two ways out.
func TestAnUnreachableDispatcherSaysWhatToDo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Setenv("WEBPILOT_API", "http://"+addr)
	t.Setenv("WEBPILOT_API_KEY", "wp_x")
	err = run([]string{"job", "some-id"}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("no error with no dispatcher")
	}
	for _, want := range []string{addr, "start it", "WEBPILOT_API"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestTheRetiredImportSaysWhereToGo: webpilot import, retired with the
// API's import, names the project upload instead, whatever its flags.
func TestTheRetiredImportSaysWhereToGo(t *testing.T) {
	err := run([]string{"import", "a.spec.ts", "--base", "http://127.0.0.1:1"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "webpilot project upload NAME DIR") {
		t.Fatalf("import: %v", err)
	}
}

// TestSubmitAttachesFiles: --file NAME=PATH and a text scenario's "file:"
// lines (read beside the scenario) become the job's files, as NAME, with
// their content and type.
func TestSubmitAttachesFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cv.txt"), []byte("Ada Lovelace"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.png"), []byte("\x89PNG"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "apply.txt")
	if err := os.WriteFile(text, []byte("base: http://127.0.0.1:9/\nfile: resume.txt=cv.txt\nUpload resume.txt to the CV field\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got jobs.Submission
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprint(w, `{"id":"job-1","state":"queued"}`)
	}))
	defer srv.Close()
	t.Setenv("WEBPILOT_API_KEY", "wp_x")
	var out bytes.Buffer
	if err := submitCmd(&conn{base: srv.URL, http: srv.Client()}, text, "", "", false, nil, []string{"me.png=" + filepath.Join(dir, "photo.png")}, &out, false); err != nil {
		t.Fatal(err)
	}
	fs := got.Scenario.Files
	if len(fs) != 2 || fs[0].Name != "resume.txt" || string(fs[0].Content) != "Ada Lovelace" || fs[0].MimeType != "text/plain" ||
		fs[1].Name != "me.png" || fs[1].MimeType != "image/png" {
		t.Fatalf("files sent: %+v", fs)
	}
	if len(got.Scenario.Steps) != 1 {
		t.Fatalf("the file line became a step: %+v", got.Scenario.Steps)
	}
	if _, err := readFiles([]string{"nopath"}); err == nil {
		t.Fatal("a reference without a path was taken")
	}
}

// TestTheCIStepSaysWhyEachTestIsLeftRed: the CI step's summary names every
// test the repair left red and why (an app regression, a test it could not
// heal, one that did not run), not the regressions alone.
func TestTheCIStepSaysWhyEachTestIsLeftRed(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	counts := repairSummary(&out, []client.RepairedTest{
		{File: "tests/login.spec.ts", Title: "logs in", Verdict: client.VerdictRegression, Reason: "the element is there but reads \"Your username is invalid!\""},
		{File: "tests/login.spec.ts", Title: "logs out", Verdict: client.VerdictUnrepairable, Reason: "no passing run recorded the element this call acted on\nmore"},
		{File: "tests/list.spec.ts", Title: "adds", Verdict: client.VerdictNotRun, Reason: "its file's run did not reach it within its time budget"},
		{File: "tests/list.spec.ts", Title: "counts", Verdict: client.VerdictHealed},
		{File: "tests/list.spec.ts", Title: "menu", Verdict: client.VerdictFlaky},
	})
	want := "1 passed, 1 healed, 1 app regressions, 1 unrepairable, 1 not run\n" +
		"  app regression: tests/login.spec.ts > logs in: the element is there but reads \"Your username is invalid!\"\n" +
		"  unrepairable: tests/login.spec.ts > logs out: no passing run recorded the element this call acted on\n" +
		"  not run: tests/list.spec.ts > adds: its file's run did not reach it within its time budget\n"
	if out.String() != want || counts[client.VerdictUnrepairable] != 1 {
		t.Fatalf("the summary:\n%s\nwant:\n%s", out.String(), want)
	}
}
