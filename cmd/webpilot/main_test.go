package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
	err := watch(&client{base: srv.URL, http: srv.Client()}, "key", "job-1", &out, false)
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
