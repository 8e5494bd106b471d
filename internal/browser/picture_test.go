package browser_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
)

// pictureSecret is drawn in black 48 px text on white: a box of its text
// that holds no magenta and some dark pixels shows it.
const pictureSecret = "WWWW9999"

// picturePage shows the secret in every way a page can besides a field,
// each in a positioned box, plus a canvas and a plain text.
const picturePage = `<!doctype html><html><head><style>
body{margin:0;background:#fff;font:48px monospace;color:#000}
.box{position:absolute;left:20px;width:900px;height:60px;white-space:nowrap}
#attr::after{content:attr(data-v)}
</style></head><body>
<div class="box" id="plain" style="top:0">Your password is ` + pictureSecret + `</div>
<div class="box" id="split" style="top:70px">Token: <b>WWWW</b><i>9999</i></div>
<div class="box" id="attr" style="top:140px" data-v="` + pictureSecret + `"></div>
<div class="box" id="shadow" style="top:210px"></div>
<iframe id="frame" style="position:absolute;left:20px;top:280px;width:900px;height:80px;border:0" srcdoc="<body style='margin:0;font:48px monospace'>Hi ` + pictureSecret + `</body>"></iframe>
<canvas id="canvas" width="300" height="60" style="position:absolute;left:20px;top:370px"></canvas>
<div class="box" id="other" style="top:440px">Nothing to hide here</div>
<script>
const h = document.getElementById('shadow').attachShadow({mode: 'closed'});
h.innerHTML = '<span>Closed: ` + pictureSecret + `</span>';
const c = document.getElementById('canvas').getContext('2d');
c.fillStyle = '#000'; c.fillRect(0, 0, 300, 60);
</script></body></html>`

func shows(t string) bool { return strings.Contains(t, pictureSecret) }

// boxState tells whether a region of a picture is painted over (all
// magenta) or shows dark pixels (text or drawing).
func boxState(img image.Image, r image.Rectangle) (masked, dark bool) {
	masked = true
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			cr, cg, cb = cr>>8, cg>>8, cb>>8
			if !(cr > 200 && cg < 60 && cb > 200) {
				masked = false
			}
			if cr < 80 && cg < 80 && cb < 80 {
				dark = true
			}
		}
	}
	return masked, dark
}

// TestPicturesPaintOverEverySecretThePageShows: in a job with secrets a
// picture never shows one: text (whole or split across elements), text a
// stylesheet draws from an attribute, a closed shadow root's text, a
// frame's text, and a canvas (whose pixels no text describes) are painted
// over; text that shows no secret is not.
func TestPicturesPaintOverEverySecretThePageShows(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, picturePage) }))
	t.Cleanup(srv.Close)
	s := browsertest.Session(t)
	if err := s.Navigate(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	// The secret's own glyphs' rows, inside each box.
	regions := map[string]image.Rectangle{
		"plain text":             image.Rect(480, 10, 880, 50),
		"text split in two":      image.Rect(200, 80, 600, 120),
		"attribute drawn by CSS": image.Rect(25, 150, 400, 190),
		"closed shadow root":     image.Rect(250, 220, 460, 260),
		"same-origin frame":      image.Rect(100, 290, 500, 330),
		"canvas":                 image.Rect(30, 380, 300, 420),
	}
	other := image.Rect(25, 450, 500, 490)
	for _, masking := range []bool{false, true} {
		if masking {
			s.HideInPictures(shows)
		} else {
			s.HideInPictures(nil)
		}
		raw, err := s.Screenshot(false)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if dir := os.Getenv("WEBPILOT_PICTURES"); dir != "" {
			_ = os.WriteFile(fmt.Sprintf("%s/masked-%v.png", dir, masking), raw, 0o644)
		}
		for name, r := range regions {
			m, dark := boxState(img, r)
			if masking && (!m || dark) {
				t.Errorf("with secrets, %s: masked=%v, dark pixels=%v", name, m, dark)
			}
			if !masking && (m || !dark) {
				t.Errorf("without secrets, %s should show as drawn: masked=%v, dark pixels=%v", name, m, dark)
			}
		}
		if m, dark := boxState(img, other); m || !dark {
			t.Errorf("masking=%v: text without a secret was painted over", masking)
		}
	}
	// The step picture (JPEG) goes through the same masking.
	s.HideInPictures(shows)
	if _, err := s.StepShot(); err != nil {
		t.Fatal(err)
	}
}

// TestNoPictureWhenAStylesheetHoldsASecret: generated content can draw a
// stylesheet's text anywhere, so no picture is taken, and the error says
// why.
func TestNoPictureWhenAStylesheetHoldsASecret(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><style>h1::after{content:"`+pictureSecret+`"}</style><h1>Hi </h1>`)
	}))
	t.Cleanup(srv.Close)
	s := browsertest.Session(t)
	if err := s.Navigate(context.Background(), srv.URL); err != nil {
		t.Fatal(err)
	}
	s.HideInPictures(shows)
	if img, err := s.Screenshot(false); !errors.Is(err, browser.ErrUnsafePicture) || img != nil || !strings.Contains(err.Error(), "styles hold a secret") {
		t.Fatalf("picture of %d bytes, err %v", len(img), err)
	}
	s.HideInPictures(nil)
	if _, err := s.Screenshot(false); err != nil {
		t.Fatalf("without secrets: %v", err)
	}
}
