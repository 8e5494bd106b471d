package browser_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestAMissingElementIsErrNoMatch: callers that wait for an element to
// appear (the step cache) tell "not there yet" from every other failure
// by the sentinel, not by the message's words.
func TestAMissingElementIsErrNoMatch(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>t</title><button data-testid="here">Here</button>`)
	}))
	t.Cleanup(srv.Close)
	s := browsertest.Session(t)
	if err := s.Navigate(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Describe(context.Background(), browser.Target{TestID: "gone"}); !errors.Is(err, browser.ErrNoMatch) {
		t.Fatalf("a missing element: %v", err)
	}
	if _, err := s.Describe(context.Background(), browser.Target{TestID: "here"}); err != nil {
		t.Fatalf("a present element: %v", err)
	}
}
