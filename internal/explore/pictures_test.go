package explore_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/explore"
	"github.com/webpilot/webpilot/internal/explore/exploretest"
	"github.com/webpilot/webpilot/internal/jobs"
)

// TestFindingPicturesDoNotShowSecrets: a page that shows one of the job's
// secrets as text (in black 64 px glyphs at a known place) and logs an
// error has its finding pictured with that text painted over; without
// the secret declared, the same picture shows it.
func TestFindingPicturesDoNotShowSecrets(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Account</title></head><body style="margin:0;background:#fff">
<main><h1 style="font:20px sans-serif;margin:0 0 0 10px">Account</h1>
<p style="position:absolute;left:100px;top:200px;margin:0;font:64px monospace;color:#000;white-space:nowrap">Key: WWWW9999</p></main>
<button style="position:absolute;left:100px;top:100px" onclick="console.error('widget failed to load')">Show widget</button>
</body></html>`)
	}))
	t.Cleanup(srv.Close)
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("secret declared %v", declared), func(t *testing.T) {
			t.Parallel()
			rec := exploretest.NewRecorder()
			in := explore.Input{BaseURL: srv.URL + "/", Goal: "find bugs", MaxActions: 3, MaxDuration: time.Minute,
				Deny: jobs.Safety{}.Words()}
			if declared {
				in.Secrets = map[string]string{"KEY": "WWWW9999"}
			}
			res, err := (&explore.Explorer{Page: session(t), Recorder: rec}).Run(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			var shot string
			for _, f := range res.Findings {
				if f.Evidence.Screenshot != "" {
					shot = f.Evidence.Screenshot
				}
			}
			raw, ok := rec.Artifacts()[shot]
			if shot == "" || !ok {
				t.Fatalf("no finding was pictured: %+v", res.Findings)
			}
			img, err := png.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			dark := 0
			for y := 210; y < 260; y++ {
				for x := 110; x < 600; x++ {
					r, g, b, _ := img.At(x, y).RGBA()
					if r>>8 < 90 && g>>8 < 90 && b>>8 < 90 {
						dark++
					}
				}
			}
			if (dark > 0) == declared {
				t.Errorf("%d dark pixels where the page shows the key (declared a secret: %v)", dark, declared)
			}
		})
	}
}

// TestAPageCannotFloodAnExploration: a page that logs 300 distinct errors
// at a click gets the per-page cap of findings, the job's cap of pictures,
// and the result says what each cap left out.
func TestAPageCannotFloodAnExploration(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Flood</title></head><body><main><h1>Flood</h1>
<button onclick="for (let i = 0; i < 300; i++) console.error('failure in widget ' + 'x'.repeat(i + 1))">Show widget</button></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	rec := exploretest.NewRecorder()
	e := &explore.Explorer{Page: session(t), Recorder: rec, Config: explore.Config{MaxFindingsPerPage: 5, MaxScreenshots: 2}}
	res, err := e.Run(context.Background(), explore.Input{BaseURL: srv.URL + "/", Goal: "find bugs", MaxActions: 3,
		MaxDuration: time.Minute, Deny: jobs.Safety{}.Words()})
	if err != nil {
		t.Fatal(err)
	}
	pictured := 0
	for _, f := range res.Findings {
		if f.Evidence.Screenshot != "" {
			pictured++
		}
	}
	if len(res.Findings) != 5 || pictured != 2 || len(rec.Artifacts()) != 2 {
		t.Fatalf("%d findings, %d pictured, %d stored; want 5, 2, 2", len(res.Findings), pictured, len(rec.Artifacts()))
	}
	capped := fmt.Sprint(res.Capped)
	if len(res.Capped) != 2 || !strings.Contains(capped, "findings per page: the cap was reached") || !strings.Contains(capped, "finding pictures per job") {
		t.Fatalf("capped: %q", res.Capped)
	}
}
