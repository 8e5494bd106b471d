package browser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// ErrUnsafePicture is why a picture of a job with secrets was not taken:
// something on the page may show a secret where it cannot be painted over.
var ErrUnsafePicture = errors.New("no picture: the page may show a secret where it cannot be masked")

// maskColour paints over what a picture must not show (Playwright's own
// mask colour, so every masked picture looks alike).
var maskColour = color.RGBA{R: 0xff, G: 0x00, B: 0xff, A: 0xff}

// HideInPictures makes every picture the session takes (Screenshot,
// StepShot, SetOfMarks) paint over each element whose text or attributes
// hides reports as showing a secret, every form field, and every element
// whose pixels cannot be read (images, canvases, video, embedded and
// cross-origin frames). Nil turns masking off (a job without secrets).
func (s *Session) HideInPictures(hides func(string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hides = hides
}

func (s *Session) pictureHides() func(string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hides
}

// picture takes a screenshot under the session's masking: as PNG, or as
// JPEG of the quality given.
func (s *Session) picture(o playwright.PageScreenshotOptions, jpegQuality int, full bool) ([]byte, error) {
	hides := s.pictureHides()
	if hides == nil {
		if jpegQuality > 0 {
			o.Type, o.Quality = playwright.ScreenshotTypeJpeg, playwright.Int(jpegQuality)
		}
		return s.page.Screenshot(o)
	}
	// Boxes are found before and after the shot and both painted: an
	// element that moved or appeared between is covered either way.
	cdp, err := s.bctx.NewCDPSession(s.page)
	if err != nil {
		return nil, fmt.Errorf("%w (devtools session: %v)", ErrUnsafePicture, err)
	}
	defer func() { _ = cdp.Detach() }()
	before, err := secretBoxes(cdp, hides, full)
	if err != nil {
		return nil, err
	}
	o.Type, o.Quality, o.Scale = playwright.ScreenshotTypePng, nil, playwright.ScreenshotScaleCss
	raw, err := s.page.Screenshot(o)
	if err != nil {
		return nil, err
	}
	after, err := secretBoxes(cdp, hides, full)
	if err != nil {
		return nil, err
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("read screenshot: %w", err)
	}
	canvas := image.NewRGBA(img.Bounds())
	draw.Draw(canvas, canvas.Bounds(), img, img.Bounds().Min, draw.Src)
	for _, b := range append(before, after...) {
		draw.Draw(canvas, b.Intersect(canvas.Bounds()), &image.Uniform{C: maskColour}, image.Point{}, draw.Src)
	}
	var out bytes.Buffer
	if jpegQuality > 0 {
		err = jpeg.Encode(&out, canvas, &jpeg.Options{Quality: jpegQuality})
	} else {
		err = png.Encode(&out, canvas)
	}
	return out.Bytes(), err
}

// domNode is the part of CDP's DOM.Node a picture's masking reads.
type domNode struct {
	BackendNodeID   int        `json:"backendNodeId"`
	NodeType        int        `json:"nodeType"`
	NodeName        string     `json:"nodeName"`
	NodeValue       string     `json:"nodeValue"`
	Attributes      []string   `json:"attributes"`
	Children        []*domNode `json:"children"`
	ShadowRoots     []*domNode `json:"shadowRoots"`
	ContentDocument *domNode   `json:"contentDocument"`
	FrameID         string     `json:"frameId"`
}

// unreadable are elements whose pixels no DOM text describes: they are
// painted over whole in a job with secrets.
var unreadable = map[string]bool{"IMG": true, "CANVAS": true, "VIDEO": true, "OBJECT": true, "EMBED": true,
	"PICTURE": true, "IMAGE": true, "FEIMAGE": true, "INPUT": true, "TEXTAREA": true, "SELECT": true}

// maxPictureNodes bounds the DOM a masked picture reads; a larger page is
// not pictured rather than pictured unchecked.
const maxPictureNodes = 50_000

// secretBoxes reads the whole DOM through the DevTools protocol (every
// frame in the page's process, open and closed shadow roots alike, with no
// page script involved, so a page cannot hide what it shows) and returns
// the boxes to paint, in the picture's pixels.
func secretBoxes(cdp playwright.CDPSession, hides func(string) bool, full bool) ([]image.Rectangle, error) {
	res, err := cdp.Send("DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
	if err != nil {
		return nil, fmt.Errorf("%w (read the page: %v)", ErrUnsafePicture, err)
	}
	var doc struct {
		Root *domNode `json:"root"`
	}
	if b, err := json.Marshal(res); err != nil || json.Unmarshal(b, &doc) != nil || doc.Root == nil {
		return nil, fmt.Errorf("%w (the page's document could not be read)", ErrUnsafePicture)
	}
	m := masker{hides: hides}
	m.visit(doc.Root)
	if m.unsafe != "" {
		return nil, fmt.Errorf("%w: %s", ErrUnsafePicture, m.unsafe)
	}
	var dx, dy float64
	if full {
		// Quads are in the viewport; a full-page picture starts at the
		// document's top left.
		if lm, err := cdp.Send("Page.getLayoutMetrics", nil); err == nil {
			if v, ok := lm.(map[string]any)["cssVisualViewport"].(map[string]any); ok {
				dx, _ = v["pageX"].(float64)
				dy, _ = v["pageY"].(float64)
			}
		}
	}
	var boxes []image.Rectangle
	for _, id := range m.mask {
		q, err := cdp.Send("DOM.getContentQuads", map[string]any{"backendNodeId": id})
		if err != nil {
			continue // not rendered: nothing to paint
		}
		quads, _ := q.(map[string]any)["quads"].([]any)
		for _, quad := range quads {
			pts, _ := quad.([]any)
			if len(pts) != 8 {
				continue
			}
			minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
			for i := 0; i < 8; i += 2 {
				x, _ := pts[i].(float64)
				y, _ := pts[i+1].(float64)
				minX, maxX = min(minX, x), max(maxX, x)
				minY, maxY = min(minY, y), max(maxY, y)
			}
			// A pixel's margin around each box: anti-aliased edges of
			// glyphs reach past the layout box.
			boxes = append(boxes, image.Rect(int(math.Floor(minX+dx))-2, int(math.Floor(minY+dy))-2,
				int(math.Ceil(maxX+dx))+2, int(math.Ceil(maxY+dy))+2))
		}
	}
	return boxes, nil
}

// masker walks a DOM and picks what a picture must paint over.
type masker struct {
	hides  func(string) bool
	mask   []int  // backend node ids
	unsafe string // why no picture may be taken at all
	nodes  int
}

// visit returns the text n shows that no masked element already covers,
// with masked parts replaced by a separator (so a secret split around a
// masked child is not joined up across it); it masks n when that text, or
// one of its attributes, shows a secret.
func (m *masker) visit(n *domNode) string {
	m.nodes++
	if m.nodes > maxPictureNodes {
		m.unsafe = fmt.Sprintf("the page has more than %d nodes", maxPictureNodes)
		return ""
	}
	switch n.NodeType {
	case 3, 4: // text, CDATA
		return n.NodeValue
	case 8, 7, 10: // comments, processing instructions, doctypes show nothing
		return ""
	}
	name := strings.ToUpper(n.NodeName)
	var b strings.Builder
	for _, c := range n.ShadowRoots {
		b.WriteString(m.visit(c))
	}
	for _, c := range n.Children {
		b.WriteString(m.visit(c))
	}
	if n.ContentDocument != nil {
		m.visit(n.ContentDocument) // a frame's text is its own
	}
	text := b.String()
	if m.unsafe != "" || n.NodeType != 1 {
		return text
	}
	switch {
	case name == "STYLE" || name == "LINK":
		if m.hides(text) || m.attrHides(n) {
			// Generated content can show it anywhere on the page.
			m.unsafe = "the page's styles hold a secret"
		}
		return ""
	case name == "SCRIPT" || name == "TEMPLATE" || name == "NOSCRIPT" || name == "HEAD" || name == "TITLE":
		return "" // not rendered (a picture never shows the title)
	case name == "IFRAME" || name == "FRAME":
		if n.ContentDocument == nil {
			m.mask = append(m.mask, n.BackendNodeID) // another process's page: unreadable
		}
		return ""
	case unreadable[name] || hasAttr(n, "contenteditable"):
		m.mask = append(m.mask, n.BackendNodeID)
		return "\x00"
	case m.hides(text) || m.attrHides(n):
		m.mask = append(m.mask, n.BackendNodeID)
		return "\x00"
	}
	return text
}

func (m *masker) attrHides(n *domNode) bool {
	for i := 1; i < len(n.Attributes); i += 2 {
		if m.hides(n.Attributes[i]) {
			return true
		}
	}
	return false
}

func hasAttr(n *domNode, name string) bool {
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		if strings.EqualFold(n.Attributes[i], name) && !strings.EqualFold(n.Attributes[i+1], "false") {
			return true
		}
	}
	return false
}

// Screenshot takes a PNG of the viewport (or the full page), masked as
// HideInPictures says.
func (s *Session) Screenshot(fullPage bool) ([]byte, error) {
	return s.picture(playwright.PageScreenshotOptions{FullPage: playwright.Bool(fullPage), Timeout: playwright.Float(10000)}, 0, fullPage)
}

// StepShot is a small picture of the viewport for a job's step timeline
// (JPEG), masked as HideInPictures says.
func (s *Session) StepShot() ([]byte, error) {
	return s.picture(playwright.PageScreenshotOptions{Timeout: actionWait()}, 60, false)
}
