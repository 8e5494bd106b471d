package orchestrator_test

import (
	"bytes"
	"context"
	"fmt"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
)

// TestEachStepIsPicturedWithFieldsMaskedWhenTheJobHasSecrets: with
// StepShots every step names a JPEG of the page stored as it finished; when
// the scenario has secrets, form fields are painted over (Playwright's
// magenta mask) so a typed secret cannot show, and only then.
func TestEachStepIsPicturedWithFieldsMaskedWhenTheJobHasSecrets(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><body style="margin:0;background:#fff">
<label for="code">Code</label>
<input id="code" style="position:absolute;left:100px;top:100px;width:600px;height:100px;font-size:64px;border:0;background:#fff;color:#000">
<button style="position:absolute;left:100px;top:300px" onclick="document.getElementById('out').textContent='sent: '+document.getElementById('code').value">Send</button>
<p id="out" style="position:absolute;left:100px;top:400px;margin:0;font:64px monospace;color:#000;white-space:nowrap"></p></body></html>`)
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name   string
		secret bool
	}{{"with a secret", true}, {"without secrets", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := scenario.Scenario{Name: "code", BaseURL: srv.URL,
				Steps: []scenario.Step{{Text: `Fill "Code" with "{{CODE}}"`}, {Text: `Click "Send"`}, {Text: `Verify "sent" is visible`}}}
			if tc.secret {
				sc.Secrets = map[string]string{"CODE": "WWWWWWWW"}
			} else {
				sc.Data = map[string]string{"CODE": "WWWWWWWW"}
			}
			rec := &memRecorder{hold: 1}
			a := &orchestrator.Agent{Page: browsertest.Session(t), Recorder: rec}
			res, err := a.Run(context.Background(), orchestrator.Input{Scenario: sc, Secrets: sc.Secrets, StepShots: true})
			if err != nil || res.Status != orchestrator.StatusSucceeded {
				t.Fatalf("status %s: %s %v", res.Status, res.Error, err)
			}
			mustPassSpec(t, res, sc.Secrets)
			stored := map[string][]byte{}
			for _, a := range rec.artifacts {
				stored[a.Name] = a.Content
			}
			for _, s := range res.Steps {
				shot, ok := stored[s.Screenshot]
				if s.Screenshot == "" || !ok {
					t.Fatalf("step %d names picture %q; stored: %d", s.Index+1, s.Screenshot, len(stored))
				}
				img, err := jpeg.Decode(bytes.NewReader(shot))
				if err != nil {
					t.Fatalf("step %d's picture is not a JPEG: %v", s.Index+1, err)
				}
				// The middle of the field, where the typed text is.
				r, g, b, _ := img.At(400, 150).RGBA()
				r, g, b = r>>8, g>>8, b>>8
				masked := r > 180 && g < 90 && b > 180
				if masked != tc.secret {
					t.Errorf("step %d: the field's pixel is rgb(%d,%d,%d); masked = %v, want %v", s.Index+1, r, g, b, masked, tc.secret)
				}
				// After the click the page echoes the value as text, in
				// black 64 px glyphs from x=100 to about 700: with a secret
				// no dark pixel of it may show, without one it must.
				if s.Index >= 1 {
					dark := 0
					for y := 410; y < 460; y++ {
						for x := 110; x < 680; x++ {
							r, g, b, _ := img.At(x, y).RGBA()
							if r>>8 < 90 && g>>8 < 90 && b>>8 < 90 {
								dark++
							}
						}
					}
					if (dark > 0) == tc.secret {
						t.Errorf("step %d: %d dark pixels where the page echoes the value (secret: %v)", s.Index+1, dark, tc.secret)
					}
				}
			}
			if len(stored) != len(sc.Steps) {
				t.Errorf("%d pictures stored for %d steps", len(stored), len(sc.Steps))
			}
		})
	}
}
