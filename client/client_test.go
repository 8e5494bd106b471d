package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestASubmissionIsRetriedUnderOneKey: a 503 is retried with the same
// Idempotency-Key, so the API makes the job once; a 400 is not retried
// and names the field.
func TestASubmissionIsRetriedUnderOneKey(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		}
		switch {
		case strings.Contains(r.URL.Path, "bad"):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid job","fields":[{"field":"scenario.base_url","message":"is required"}]}`)
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"id":"j1","kind":"scenario","state":"queued"}`)
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "k")
	v, err := c.SubmitJob(context.Background(), Submission{Kind: KindScenario})
	if err != nil || v.ID != "j1" || v.State != JobStateQueued {
		t.Fatalf("submit after a 503: %+v, %v", v, err)
	}
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("idempotency keys sent: %q (want one key, twice)", keys)
	}
	_, err = c.Submit(context.Background(), "/bad", Submission{})
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || len(e.Fields) != 1 || e.Fields[0].Field != "scenario.base_url" ||
		e.Error() != "invalid job (HTTP 400)\n  scenario.base_url: is required" || len(keys) != 3 {
		t.Fatalf("a refused submission: %v (%d requests)", err, len(keys))
	}
}

// TestEventsEndAtTheEndOrSayTheStreamWasCut follows a stream to its end
// event, a stream cut before it, and a refused one.
func TestEventsEndAtTheEndOrSayTheStreamWasCut(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Path, "gone"):
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"job not found"}`)
			return
		case strings.Contains(r.URL.Path, "cut"):
			fmt.Fprint(w, "event: state\ndata: {\"state\":\"running\"}\n\n")
			return
		}
		fmt.Fprint(w, "event: state\ndata: {\"state\":\"running\"}\n\nevent: step\ndata: {\"index\":0}\n\nevent: end\ndata: {}\n\n")
	}))
	defer srv.Close()
	c := New(srv.URL, "k")
	var names []string
	err := c.Events(context.Background(), "whole", func(e Event) error { names = append(names, e.Name); return nil })
	if err != nil || strings.Join(names, ",") != "state,step,end" {
		t.Fatalf("a whole stream: %v, %v", names, err)
	}
	if err := c.Events(context.Background(), "cut", func(Event) error { return nil }); !errors.Is(err, ErrStreamEnded) {
		t.Fatalf("a cut stream: %v (want ErrStreamEnded)", err)
	}
	if err := c.Events(context.Background(), "gone", func(Event) error { return nil }); !IsStatus(err, http.StatusNotFound) {
		t.Fatalf("a refused stream: %v (want a 404)", err)
	}
}
