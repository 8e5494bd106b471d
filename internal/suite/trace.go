package suite

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/webpilot/webpilot/internal/sandbox"
)

// TraceAction is one action or assertion of a test as its Playwright
// trace recorded it: what was called, on which selector, from where in the
// customer's source, how long it took, how it ended, and the element it
// acted on as the page held it just before.
type TraceAction struct {
	API      string `json:"api"`    // locator.click, expect, page.goto
	Method   string `json:"method"` // click, fill, expect, goto
	Selector string `json:"selector,omitempty"`
	// Expect is an assertion's matcher expression (to.have.text) and
	// Negated its .not.
	Expect  string `json:"expect,omitempty"`
	Negated bool   `json:"negated,omitempty"`
	// File, Line and Column are the call site in the project's source.
	File     string        `json:"file,omitempty"`
	Line     int           `json:"line,omitempty"`
	Column   int           `json:"column,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Error    string        `json:"error,omitempty"`
	// Pending says the call never ended: the test timed out during it.
	Pending bool `json:"pending,omitempty"`
	// Target is the element acted on, as the snapshot the runner marked it
	// in holds it (nil when the call has none, or the trace took none).
	Target *SnapshotElement `json:"target,omitempty"`
	// URL is the page's URL when the call began.
	URL string `json:"url,omitempty"`
	// Read says the call read a value the test then checked itself and
	// found wrong (expect(await locator.textContent()).toBe(…)): the call
	// succeeded, and the failure is the value's.
	Read bool `json:"read,omitempty"`
	// Typed is what a fill or a type entered. It is read to tell an entry
	// the app lost from a locator that drifted, and never kept: a test may
	// type a secret.
	Typed string `json:"-"`
	// Result is what the call answered (a read's value), as the trace
	// holds it: read to tie a failed value check to its read, never kept.
	Result string `json:"-"`
	// Callers are the lines, in the project's own files, whose calls led
	// to this one, innermost first (a helper's caller in the test).
	Callers []CallSite `json:"-"`
	// Dialog names the buttons of a modal dialog the page showed when the
	// call ended, when the call opened one (the dialog is new in the
	// page's snapshot after it): what a flow heal answers.
	Dialog []string `json:"-"`
	// callID is the call's id in the trace, whose snapshots show the page
	// as the call saw it.
	callID string
	// afterHook says an after hook made the call (afterEach, afterAll, a
	// fixture's teardown): it ran after the test's own failure.
	afterHook bool
}

// checksPage says the call checks where the page is or what it is
// called (waitForURL, toHaveURL, toHaveTitle), on no element.
func (a TraceAction) checksPage() bool {
	// A wait for a URL is traced as the wait's event (waitForEventInfo)
	// under the API's name.
	return a.Selector == "" && (a.Method == "waitForURL" || strings.HasSuffix(a.API, ".waitForURL") || a.Expect == "to.have.url" || a.Expect == "to.have.title")
}

// CallSite is a place in the project's source.
type CallSite struct {
	File         string
	Line, Column int
}

// SnapshotElement is an element as a trace's DOM snapshot holds it.
type SnapshotElement struct {
	Tag        string            `json:"tag"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Text       string            `json:"text,omitempty"`
	// Path is the tags from the document's root to the element.
	Path string `json:"path,omitempty"`
	// Filled says a field held something when the snapshot was taken (an
	// input's or textarea's value, a checkbox's or radio's check): whether
	// a required field would let its form submit. The value itself is
	// never kept: it may be a secret the test typed.
	Filled bool `json:"filled,omitempty"`
}

// TraceConsole is a console message the page logged.
type TraceConsole struct {
	Type string `json:"type"` // error, warning, log…
	Text string `json:"text"`
	URL  string `json:"url,omitempty"`
}

// TraceRequest is a network request the page made.
type TraceRequest struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// Trace is what a test's trace tells: its calls in order, what the page
// logged and its requests.
type Trace struct {
	Actions  []TraceAction  `json:"actions"`
	Console  []TraceConsole `json:"console,omitempty"`
	Requests []TraceRequest `json:"requests,omitempty"`
}

// traceEvent is one line of a trace file (the fields read here).
type traceEvent struct {
	Type      string          `json:"type"`
	CallID    string          `json:"callId"`
	StepID    string          `json:"stepId"`
	ParentID  string          `json:"parentId"` // the runner's steps'
	APIName   string          `json:"apiName"`
	Method    string          `json:"method"`
	StartTime float64         `json:"startTime"`
	EndTime   float64         `json:"endTime"`
	Result    json.RawMessage `json:"result"`
	Params    struct {
		Selector   string `json:"selector"`
		Expression string `json:"expression"`
		IsNot      bool   `json:"isNot"`
		URL        string `json:"url"`
		Value      string `json:"value"` // fill's
		Text       string `json:"text"`  // type's, pressSequentially's
	} `json:"params"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Stack []struct {
		File   string `json:"file"`
		Line   int    `json:"line"`
		Column int    `json:"column"`
	} `json:"stack"`
	BeforeSnapshot string `json:"beforeSnapshot"`
	// console
	MessageType string `json:"messageType"`
	Text        string `json:"text"`
	Location    *struct {
		URL string `json:"url"`
	} `json:"location"`
	// frame-snapshot
	Snapshot *frameSnapshot `json:"snapshot"`
	// resource-snapshot (network)
	Request *struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"request"`
	Response *struct {
		Status int `json:"status"`
	} `json:"response"`
}

type frameSnapshot struct {
	CallID       string          `json:"callId"`
	SnapshotName string          `json:"snapshotName"`
	FrameID      string          `json:"frameId"`
	FrameURL     string          `json:"frameUrl"`
	HTML         json.RawMessage `json:"html"`
	IsMainFrame  bool            `json:"isMainFrame"`
	nodes        []any           // post-order, built on first use
	tree         any
	decoded      bool
	// budget is what is left to decode of the trace's snapshots together
	// (shared by them all; nil: unbounded, as in a fuzz of one snapshot).
	budget *int
}

// maxVisits bounds the nodes one look into a snapshot visits.
const maxVisits = 200_000

// maxTraceBytes bounds what is read of one trace: the file as stored,
// and everything read out of it together, uncompressed.
const maxTraceBytes = 64 << 20

// maxTraceEntries bounds the files one trace holds (a real one holds a few
// hundred: events, stacks and the page's resources).
const maxTraceEntries = 20_000

// ReadTrace reads the trace.zip at rel inside dir (a run's directory, or
// any directory holding one) that the runner wrote for a test of a
// project laid out at root (as the runner saw it). The trace is the run's
// output, so it is opened as everything a run leaves is (no link
// followed, a regular file, bounded) and read within a budget.
func ReadTrace(dir, rel, root string) (Trace, error) {
	zr, closer, err := openTrace(dir, rel)
	if err != nil {
		return Trace{}, err
	}
	defer closer.Close()
	budget := &readBudget{left: maxTraceBytes}
	var testEvents, ctxEvents, netEvents []traceEvent
	stacks := map[string][]CallSite{} // the client's whole stacks, by call id
	for _, f := range zr.File {
		switch {
		case strings.HasSuffix(f.Name, ".stacks"):
			err = readStacks(f, root, stacks, budget)
		case f.Name == "test.trace":
			testEvents, err = readEvents(f, budget)
		case strings.HasSuffix(f.Name, ".trace"):
			var ev []traceEvent
			ev, err = readEvents(f, budget)
			ctxEvents = append(ctxEvents, ev...)
		case strings.HasSuffix(f.Name, ".network"):
			var ev []traceEvent
			ev, err = readEvents(f, budget)
			netEvents = append(netEvents, ev...)
		}
		if err != nil {
			return Trace{}, fmt.Errorf("read %s: %w", f.Name, err)
		}
	}
	// The runner's steps carry the call sites; the context's calls carry
	// selectors, timings, outcomes and snapshots.
	sites := map[string]traceEvent{}
	steps := map[string]traceEvent{} // the runner's steps, by id
	for _, e := range testEvents {
		if e.Type == "before" {
			steps[e.CallID] = e
			if len(e.Stack) > 0 {
				sites[e.CallID] = e
			}
		}
	}
	ends := map[string]traceEvent{}
	snaps := map[string][]*frameSnapshot{} // by frame, in order
	byName := map[string]*frameSnapshot{}
	decodeLeft := maxDecodedBytes
	var tr Trace
	for _, e := range ctxEvents {
		switch e.Type {
		case "after":
			ends[e.CallID] = e
		case "frame-snapshot":
			if s := e.Snapshot; s != nil {
				s.budget = &decodeLeft
				snaps[s.FrameID] = append(snaps[s.FrameID], s)
				if s.IsMainFrame || byName[s.SnapshotName] == nil {
					byName[s.SnapshotName] = s
				}
			}
		case "console":
			c := TraceConsole{Type: e.MessageType, Text: e.Text}
			if e.Location != nil {
				c.URL = e.Location.URL
			}
			tr.Console = append(tr.Console, c)
		}
	}
	for _, e := range netEvents {
		if e.Request != nil {
			r := TraceRequest{Method: e.Request.Method, URL: e.Request.URL}
			if e.Response != nil {
				r.Status = e.Response.Status
			}
			tr.Requests = append(tr.Requests, r)
		}
	}
	for _, e := range ctxEvents {
		if e.Type != "before" || e.StepID == "" {
			continue
		}
		a := TraceAction{API: e.APIName, Method: e.Method, Selector: e.Params.Selector, Expect: e.Params.Expression, Negated: e.Params.IsNot,
			callID: e.CallID, afterHook: inAfterHooks(steps, e.StepID)}
		switch e.Method {
		case "fill":
			a.Typed = e.Params.Value
		case "type", "pressSequentially":
			a.Typed = e.Params.Text
		}
		if site, ok := sites[e.StepID]; ok {
			s := site.Stack[0]
			a.File, a.Line, a.Column = projectPath(s.File, root), s.Line, s.Column
			if st := stacks[e.CallID]; len(st) > 1 && st[0] == (CallSite{a.File, a.Line, a.Column}) {
				// A caller's column is where its await resumed as often as
				// where its call is: only its line is kept.
				for _, c := range st[1:] {
					a.Callers = append(a.Callers, CallSite{File: c.File, Line: c.Line})
				}
			}
			if a.Method == "expect" || strings.HasPrefix(site.APIName, "expect.") {
				a.API = site.APIName
			}
		}
		if end, ok := ends[e.CallID]; ok {
			a.Duration = time.Duration((end.EndTime - e.StartTime) * float64(time.Millisecond))
			if end.Error != nil {
				a.Error = stripANSI(end.Error.Message)
			}
			if len(end.Result) > 0 && len(end.Result) < 4096 {
				a.Result = string(end.Result)
			}
		} else {
			a.Pending = true
		}
		// Where the page was when the call began; a loaded runner may not
		// have written that snapshot, and its input's or its end's page is
		// the next best.
		for _, name := range []string{e.BeforeSnapshot, "input@" + e.CallID, "after@" + e.CallID} {
			if s := byName[name]; s != nil && s.FrameURL != "" && a.URL == "" {
				a.URL = s.FrameURL
			}
		}
		// A dialog that opens is written whole in the snapshot after the
		// call that opened it (a snapshot refers back only to nodes that
		// did not change), so only those snapshots are read.
		if s := byName["after@"+e.CallID]; s != nil && bytes.Contains(s.HTML, modalMark) {
			frame := snaps[s.FrameID]
			if at := slices.Index(frame, s); at >= 0 {
				dom := elementsOf(frame, at)
				if root := openDialog(dom); root >= 0 {
					a.Dialog = buttonsUnder(dom, root)
				}
			}
		}
		// The runner marks the target in the snapshot of the action's input
		// (a click's point), else before the call, else (an assertion) after.
		for _, name := range []string{"input@" + e.CallID, e.BeforeSnapshot, "after@" + e.CallID} {
			if s := byName[name]; s != nil && a.Selector != "" && a.Target == nil {
				a.Target = s.target(snaps[s.FrameID], e.CallID)
			}
		}
		if a.Target == nil && a.Error == "" && !a.Pending {
			// The runner marks no target for some calls (a waitForSelector,
			// a textContent): a plain CSS selector is matched on the page
			// after the call, as the runner would have found it.
			a.Target = cssTarget(a.Selector, snaps, byName["after@"+e.CallID], byName[e.BeforeSnapshot])
		}
		tr.Actions = append(tr.Actions, a)
	}
	return tr, nil
}

// engine is a selector of one of the runner's own engines (text=, id=,
// xpath=, data-testid=…), which is not CSS.
var engine = regexp.MustCompile(`^\s*[A-Za-z_-]+=`)

// cssTarget is the first element of the first of snapshots that a plain
// CSS selector (no engine of the runner's own, no chain) matches; nil when
// the selector is not plain CSS or matches nothing. Only selectors an
// element answers alone are matched (a tag, an id, classes, attributes):
// one whose match depends on ancestors or siblings matches nothing here.
func cssTarget(selector string, snaps map[string][]*frameSnapshot, snapshots ...*frameSnapshot) *SnapshotElement {
	selector = strings.TrimPrefix(selector, "css=")
	if selector == "" || strings.Contains(selector, "internal:") || strings.Contains(selector, ">>") ||
		strings.HasPrefix(selector, "/") || strings.HasPrefix(selector, "(") || engine.MatchString(selector) {
		return nil
	}
	m, err := cascadia.Parse(selector)
	if err != nil {
		return nil
	}
	for _, s := range snapshots {
		if s == nil {
			continue
		}
		frame := snaps[s.FrameID]
		for _, el := range elementsOf(frame, slices.Index(frame, s)) {
			n := &html.Node{Type: html.ElementNode, Data: el.Tag}
			for k, v := range el.Attributes {
				n.Attr = append(n.Attr, html.Attribute{Key: k, Val: v})
			}
			if m.Match(n) {
				return &el
			}
		}
	}
	return nil
}

// inAfterHooks says a runner's step is inside its After Hooks (or Worker
// Cleanup): the afterEach and afterAll hooks and the fixtures' teardown,
// which run after the test's own failure.
func inAfterHooks(steps map[string]traceEvent, id string) bool {
	for range 100 { // a trace is untrusted: no cycle of parents holds the reader
		st, ok := steps[id]
		if !ok {
			return false
		}
		if st.ParentID == "" {
			return st.APIName == "After Hooks" || st.APIName == "Worker Cleanup"
		}
		id = st.ParentID
	}
	return false
}

// readStacks reads the client's stacks file ({"files": [...], "stacks":
// [[call number, [[file index, line, column, function], ...]], ...]}) into
// stacks, keyed call@N, keeping the frames in the project's own files.
func readStacks(f *zip.File, root string, stacks map[string][]CallSite, budget *readBudget) error {
	rc, err := budget.open(f)
	if err != nil {
		return err
	}
	defer rc.Close()
	var raw struct {
		Files  []string             `json:"files"`
		Stacks [][2]json.RawMessage `json:"stacks"`
	}
	if err := json.NewDecoder(rc).Decode(&raw); err != nil {
		return err
	}
	for _, st := range raw.Stacks {
		var n int
		var frames [][4]any
		if json.Unmarshal(st[0], &n) != nil || json.Unmarshal(st[1], &frames) != nil {
			continue
		}
		var sites []CallSite
		for _, fr := range frames {
			i, _ := fr[0].(float64)
			line, _ := fr[1].(float64)
			col, _ := fr[2].(float64)
			if int(i) < 0 || int(i) >= len(raw.Files) {
				continue
			}
			if file := projectPath(raw.Files[int(i)], root); !filepath.IsAbs(file) && !strings.Contains(file, "node_modules/") {
				sites = append(sites, CallSite{file, int(line), int(col)})
			}
		}
		stacks["call@"+strconv.Itoa(n)] = sites
	}
	return nil
}

func readEvents(f *zip.File, budget *readBudget) ([]traceEvent, error) {
	rc, err := budget.open(f)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	var out []traceEvent
	for sc.Scan() {
		var e traceEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || !keptEvents[e.Type] {
			continue // what is not read is not kept: a line of {} costs nothing
		}
		if budget.events++; budget.events > maxTraceEvents {
			return nil, errEvents
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// keptEvents are the trace events a trace is read for.
var keptEvents = map[string]bool{"before": true, "after": true, "frame-snapshot": true, "console": true, "resource-snapshot": true}

// maxTraceEvents bounds the events kept of one trace: a decoded event
// costs a few hundred bytes however short its line (a real test's trace
// holds a few thousand).
const maxTraceEvents = 100_000

// errEvents means a trace holds more than maxTraceEvents events.
var errEvents = fmt.Errorf("the trace holds more than %d events", maxTraceEvents)

// projectPath names a call site's file relative to the project's root.
func projectPath(file, root string) string {
	if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return file
}

// FailureDOM lists the elements of the page, in the main frame, as the
// trace last saw it around the failing call (after it when the runner
// took that snapshot, else before it, else as the calls before it left
// it): where re-location looks for the element a drifted locator no
// longer finds. The failing call is the one
// whose id is callID, else the last that ended with an error, else the
// last that never ended (the test ran out of time during it): never a
// later call's page (an afterEach's navigation away, a closing page).
func FailureDOM(dir, rel, callID string) ([]SnapshotElement, error) {
	zr, closer, err := openTrace(dir, rel)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	budget := &readBudget{left: maxTraceBytes}
	var events []traceEvent
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".trace") && f.Name != "test.trace" {
			ev, err := readEvents(f, budget)
			if err != nil {
				return nil, err
			}
			events = append(events, ev...)
		}
	}
	failed := callID
	ended := map[string]bool{}
	for _, e := range events {
		if e.Type == "after" {
			ended[e.CallID] = true
			if e.Error != nil && callID == "" {
				failed = e.CallID
			}
		}
	}
	if failed == "" {
		for _, e := range events {
			if e.Type == "before" && e.Params.Selector != "" && !ended[e.CallID] {
				failed = e.CallID
			}
		}
	}
	snaps := map[string][]*frameSnapshot{}
	decodeLeft := maxDecodedBytes
	var pick, prior *frameSnapshot
	started := false
	for _, e := range events {
		if e.Type == "before" && e.CallID == failed && failed != "" {
			started = true
		}
		if e.Type != "frame-snapshot" || e.Snapshot == nil {
			continue
		}
		s := e.Snapshot
		s.budget = &decodeLeft
		snaps[s.FrameID] = append(snaps[s.FrameID], s)
		if s.IsMainFrame && (failed == "" || s.CallID == failed) {
			pick = s // the last main-frame snapshot of the failing call
		}
		if s.IsMainFrame && !started {
			prior = s
		}
	}
	if pick == nil {
		// The test ran out of time before the runner wrote the failing
		// call's own snapshot (a slow full-page capture, a loaded host):
		// the page as last seen before that call began is the nearest
		// picture of it, never one a later call (a hook's) left.
		pick = prior
	}
	if pick == nil {
		return nil, errors.New("the trace holds no snapshot of the page at the failure")
	}
	frame := snaps[pick.FrameID]
	for i, s := range frame {
		if s == pick {
			return elementsOf(frame, i), nil
		}
	}
	return nil, nil
}

// openTrace opens the trace.zip at rel inside dir as every file a run
// leaves is opened, and checks, before the archive's directory is read
// into memory, that it lists no more entries than a trace holds.
func openTrace(dir, rel string) (*zip.Reader, io.Closer, error) {
	f, size, err := sandbox.OpenResult(dir, rel, maxTraceBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("open trace: %w", err)
	}
	if n, err := zipEntries(f, size, maxTraceEntries); err != nil || n > maxTraceEntries {
		_ = f.Close()
		if err == nil {
			err = fmt.Errorf("it lists %d files, more than the %d a trace may", n, maxTraceEntries)
		}
		return nil, nil, fmt.Errorf("open trace: %w", err)
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("open trace: %w", err)
	}
	return zr, f, nil
}

// zipEntries counts a zip's entries as its central directory holds them,
// up to one more than limit, without reading the directory into memory. The
// count the end record gives is not enough: a reader keeps reading
// headers past it (393,316 entries were read of an archive claiming 100,
// which is 393,316 modulo 65,536). A zip64 archive, which no trace or
// upload is, counts as too many.
func zipEntries(r io.ReaderAt, size int64, limit int) (int, error) {
	const eocdLen, maxComment, headerLen = 22, 0xffff, 46
	tail := min(size, eocdLen+maxComment)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocdLen {
		return 0, errors.New("not a zip archive")
	}
	recorded := int(binary.LittleEndian.Uint16(buf[i+10:]))
	dirSize := int64(binary.LittleEndian.Uint32(buf[i+12:]))
	dirEnd := size - tail + int64(i) // the directory ends where the end record starts
	if recorded == 0xffff || recorded > limit {
		return math.MaxInt, nil
	}
	n := 0
	var h [headerLen]byte
	for at := dirEnd - dirSize; at >= 0 && at+headerLen <= dirEnd; {
		if _, err := r.ReadAt(h[:], at); err != nil || !bytes.Equal(h[:4], []byte("PK\x01\x02")) {
			break
		}
		if n++; n > limit {
			return n, nil
		}
		at += headerLen + int64(binary.LittleEndian.Uint16(h[28:])) + int64(binary.LittleEndian.Uint16(h[30:])) + int64(binary.LittleEndian.Uint16(h[32:]))
	}
	return max(n, recorded), nil
}

// readBudget is what is left of the bytes one trace may yield, across all
// of its entries together: a trace whose entries each stay under a limit
// can still inflate to any size in all.
type readBudget struct {
	left   int64 // bytes left to inflate
	events int   // events kept so far
}

// errBudget means a trace inflates to more than maxTraceBytes.
var errBudget = fmt.Errorf("the trace inflates to more than %d bytes", maxTraceBytes)

func (b *readBudget) open(f *zip.File) (io.ReadCloser, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	return budgetReader{rc, b}, nil
}

type budgetReader struct {
	io.ReadCloser
	b *readBudget
}

func (r budgetReader) Read(p []byte) (int, error) {
	if r.b.left <= 0 {
		return 0, errBudget
	}
	if int64(len(p)) > r.b.left {
		p = p[:r.b.left]
	}
	n, err := r.ReadCloser.Read(p)
	r.b.left -= int64(n)
	return n, err
}
