package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/browser"
	"github.com/webpilot/webpilot/browser/browsertest"
)

// lateFetch serves a page whose button changes nothing at once and fetches
// after a delay (?after=ms); the answer, 150 ms later, is written into
// the page.
func lateFetch(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/count" {
			time.Sleep(150 * time.Millisecond)
			fmt.Fprint(w, r.URL.Query().Get("n"))
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><body><button onclick="later()">Count</button><p id="out">none</p><script>
let n = 0;
function later() { n++; const k = n; setTimeout(async () => {
  const r = await fetch('/api/count?n=' + k); document.getElementById('out').textContent = 'answer ' + (await r.text());
}, %s); }
</script></body></html>`, r.URL.Query().Get("after"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSettleSeesAFetchStartedAfterTheClick: a click that starts its
// request only 100 ms later is not called settled before the answer is in
// the page (before, quiet was counted from a DOM change older than the
// click, and settling ended after a few milliseconds).
func TestSettleSeesAFetchStartedAfterTheClick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, after := range []int{0, 100} {
		s := browsertest.Session(t)
		if err := s.Navigate(ctx, lateFetch(t)+fmt.Sprintf("/?after=%d", after)); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 10; i++ {
			start := time.Now()
			if out := s.Execute(ctx, browser.Command{Action: "click", Target: browser.Target{Role: "button", Name: "Count"}}, browser.ExecOptions{}); out.Err != nil {
				t.Fatal(out.Err)
			}
			rep := s.Settle(ctx, browser.SettleOptions{Since: start, Acted: true})
			text, _, err := s.Read(ctx, browser.Target{CSS: "#out"}, "")
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("answer %d", i); !strings.Contains(text, want) {
				t.Fatalf("fetch %d ms after the click, sample %d: settle ended after %s (%s) with the page showing %q, want %q",
					after, i, rep.Duration.Round(time.Millisecond), rep.EndedBy, text, want)
			}
		}
	}
}
