package orchestrator_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestACheckAfterAnActionSeesWhatTheActionDid: steps no model looks at
// settle briefly, but a check never runs on the page as it was before the
// previous action took effect. Here the click's request starts about 30 ms
// later, after a chain of messages no tracker of the page sees, and its
// answer (300 ms later) shows an error: checking the error is hidden must
// fail the job, never pass it on the page as it was.
func TestACheckAfterAnActionSeesWhatTheActionDid(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/ping", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("/api/save", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "failed")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body><button id="save">Save</button><p id="err" hidden>Could not save</p>
<script>
fetch('/api/ping'); // the page has been fetching lately
document.getElementById('save').addEventListener('click', () => {
  const until = performance.now() + 30, ch = new MessageChannel();
  ch.port1.onmessage = async () => {
    if (performance.now() < until) { ch.port2.postMessage(0); return; }
    if (await (await fetch('/api/save')).text() === 'failed') document.getElementById('err').hidden = false;
  };
  ch.port2.postMessage(0);
});
</script></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for i := range 2 {
		sc := scenario.Scenario{Name: "save", BaseURL: srv.URL + "/", Steps: []scenario.Step{
			{Text: `Click "Save"`},
			{Text: `Verify "Could not save" is hidden`},
		}}
		res, _, _ := runAgent(t, sc)
		if res.Status != orchestrator.StatusFailed || len(res.Steps) != 2 || res.Steps[1].Status != orchestrator.StepFailed {
			t.Fatalf("run %d: the check passed on the page before the click took effect: %s %s", i+1, res.Status, res.Error)
		}
		if !strings.Contains(res.Error, "step 2") {
			t.Fatalf("run %d: failed elsewhere: %s", i+1, res.Error)
		}
	}
}
