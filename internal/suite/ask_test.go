package suite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
)

// TestAReasonNeverNamesTheModelsEndpoint: a repair whose agent could not
// be reached said so with the worker's model endpoint in its reason
// (an address inside the operator's network), shown to the tenant. It
// says what went wrong, never where.
func TestAReasonNeverNamesTheModelsEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unreachable", &url.Error{Op: "Post", URL: "http://10.20.0.7:8000/v1/chat/completions", Err: errors.New("dial tcp 10.20.0.7:8000: connect: connection refused")},
			"the model's endpoint could not be reached"},
		{"wrapped", fmt.Errorf("ask: %w", &url.Error{Op: "Post", URL: "https://llm.internal.example/v1", Err: errors.New("EOF")}), "the model's endpoint could not be reached"},
		{"too slow", fmt.Errorf("ask: %w", context.DeadlineExceeded), "the model did not answer in time"},
		{"an answer naming it", errors.New("error, status code: 502, message: bad gateway from llm-gw.corp:8443 (upstream 192.168.3.4)"),
			"error, status code: 502, message: bad gateway from the model's endpoint (upstream the model's endpoint)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := askFailed(tc.err); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}
