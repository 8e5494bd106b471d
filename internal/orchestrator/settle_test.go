package orchestrator_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
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

// TestTheWaitASettleAbsorbedIsCarriedIntoTheSpec: a click whose page loads
// its content in 5.5 s settles (the job's check then passes at once), but
// the spec has no settle: its first check after the click must be allowed
// everything the job waited from the click's end to the moment the check
// held. The spec passes twice in a row, each run on a freshly loaded page.
func TestTheWaitASettleAbsorbedIsCarriedIntoTheSpec(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/report" {
			time.Sleep(5500 * time.Millisecond)
			fmt.Fprint(w, "Report ready")
			return
		}
		fmt.Fprint(w, `<!doctype html><html><body><h1>Reports</h1><button onclick="fetch('/report').then(r => r.text()).then(t => { const p = document.createElement('p'); p.textContent = t; document.body.append(p) })">Load report</button></body></html>`)
	}))
	t.Cleanup(srv.Close)
	sc := scenario.Scenario{Name: "slow report", BaseURL: srv.URL + "/", Steps: []scenario.Step{
		{Text: "Ask for the quarterly report"},
		{Text: `Verify "Report ready" is visible`},
	}}
	res, _, _ := runAgent(t, sc, decision(map[string]any{"status": "complete", "reasoning": "load it",
		"commands": []any{cmd("click", map[string]any{"role": "button", "name": "Load report"}, "")}}))
	if res.Status != orchestrator.StatusSucceeded {
		t.Fatalf("%s: %s", res.Status, res.Error)
	}
	check := res.Steps[1].Commands[0]
	if check.Waited < 5*time.Second {
		t.Fatalf("the check is said to have waited %s; the page took 5.5 s from the click", check.Waited)
	}
	if !strings.Contains(res.Script, "timeout: ") {
		t.Fatalf("the spec's check has no timeout:\n%s", res.Script)
	}
	// runAgent ran it once; a second run loads the page afresh.
	if out, err := browsertest.RunSpec(context.Background(), res.Script, nil); err != nil {
		t.Fatalf("the spec's second run fails: %v\n%s", err, out)
	}
}
