package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// TestAPageCannotStandInForAxe: a page that defines its own window.axe
// (answering 3,000 made-up violations) and tampers with the prototypes
// axe-core uses still gets the real axe-core, run where the page cannot
// reach: its one real violation (an image without alt text) is found and
// nothing the page made up.
func TestAPageCannotStandInForAxe(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Forger</title><script>
window.axe = { run: async () => ({ violations: Array.from({ length: 3000 }, (_, i) => ({ id: 'forged-' + i, impact: 'critical',
  help: 'forged', helpUrl: 'javascript:alert(1)', nodes: [{ target: ['#x' + i], html: '<b>' }] })) }) };
Object.defineProperty(window, 'axe', { value: window.axe, writable: false });
Array.prototype.map = function () { return ['tampered']; };
</script></head><body><main><h1>Forger</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	s := browsertest.Session(t)
	if err := s.Navigate(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	got, err := s.Axe(context.Background(), browsertest.AxeSource(t))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, v := range got {
		rules[v.Rule] = true
	}
	if len(got) > 5 || !rules["image-alt"] {
		t.Fatalf("%d violations, rules %v: want the real image-alt and nothing forged", len(got), rules)
	}
}
