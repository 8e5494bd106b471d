package browser

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Dialog is a native dialog (alert, confirm, prompt, beforeunload) the
// page opened, and how it was answered.
type Dialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	// Answer is "accept" or "dismiss"; PromptText is what a prompt was
	// answered with.
	Answer     string `json:"answer"`
	PromptText string `json:"prompt_text,omitempty"`
	Page       int    `json:"page"` // the page (1 is the first) that opened it
}

// DialogAnswer is how the next dialog is answered, from a "dialog"
// command's value: "accept", "dismiss", "accept:TEXT" for a prompt, or
// "default" to take back an answer no dialog used (the next is answered as
// the test runner does).
type DialogAnswer struct {
	Accept  bool
	Text    string
	Default bool
}

// ParseDialogAnswer reads a dialog command's value.
func ParseDialogAnswer(v string) (DialogAnswer, error) {
	switch {
	case v == "accept":
		return DialogAnswer{Accept: true}, nil
	case v == "dismiss":
		return DialogAnswer{}, nil
	case v == "default":
		return DialogAnswer{Default: true}, nil
	case strings.HasPrefix(v, "accept:"):
		return DialogAnswer{Accept: true, Text: strings.TrimPrefix(v, "accept:")}, nil
	}
	return DialogAnswer{}, fmt.Errorf(`dialog takes "accept", "dismiss" or "accept:TEXT" (the text a prompt is answered with), got %q`, v)
}

// PageInfo is one open page (tab or popup) of the session.
type PageInfo struct {
	Number  int    `json:"number"` // 1 is the job's first page; popups count on
	URL     string `json:"url"`
	Current bool   `json:"current,omitempty"`
	Closed  bool   `json:"closed,omitempty"`
}

// trackPages follows every page the context opens (popups, new tabs) and
// answers every dialog: as the last "dialog" command said, once, or as
// Playwright's test runner does when nothing was said (beforeunload
// accepted, the others dismissed), so a spec behaves as the job did.
func (s *Session) trackPages(bctx playwright.BrowserContext, first playwright.Page) {
	s.pages = []playwright.Page{first}
	bctx.OnPage(func(p playwright.Page) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, have := range s.pages {
			if have == p {
				return
			}
		}
		s.pages = append(s.pages, p)
		s.net.attach(p)
		s.opening = time.Time{}
		if u := p.URL(); u == "" || u == "about:blank" {
			// Announced before its first document committed (on a loaded
			// machine the batch's delta then said "page 2 opened: " with
			// no address): settling waits for that commit too, a little.
			s.opening = time.Now()
			p.OnFrameNavigated(func(f playwright.Frame) {
				if f.ParentFrame() == nil {
					s.mu.Lock()
					s.opening = time.Time{}
					s.mu.Unlock()
				}
			})
		}
	})
	bctx.OnDialog(func(d playwright.Dialog) {
		s.mu.Lock()
		ans := s.nextDialog
		s.nextDialog = nil
		rec := Dialog{Type: d.Type(), Message: d.Message(), Page: s.pageNumberLocked(d.Page())}
		s.mu.Unlock()
		var err error
		switch {
		case ans != nil && ans.Accept:
			rec.Answer, rec.PromptText = "accept", ans.Text
			if d.Type() == "prompt" {
				err = d.Accept(ans.Text)
			} else {
				err = d.Accept()
			}
		case ans != nil || d.Type() != "beforeunload":
			rec.Answer = "dismiss"
			err = d.Dismiss()
		default:
			rec.Answer = "accept"
			err = d.Accept()
		}
		if err != nil {
			s.log.Warn("answer dialog", "type", rec.Type, "err", err)
		}
		s.mu.Lock()
		s.dialogs = append(s.dialogs, rec)
		s.mu.Unlock()
	})
}

// noteOpening notices a top-level document request from a page the
// session does not know yet: a popup is opening, and settling waits (a
// little) for it to appear so the batch's delta can report it.
func (s *Session) noteOpening(req playwright.Request) {
	if !req.IsNavigationRequest() {
		return
	}
	// The frame of a page that is still being created is not known yet.
	var pg playwright.Page
	if f := req.Frame(); f != nil {
		if f.ParentFrame() != nil {
			return
		}
		pg = f.Page()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pg == nil || s.pageNumberLocked(pg) == 0 {
		s.opening = time.Now()
	}
}

// pageOpening reports whether a page was seen opening lately: its
// request seen, the page not yet announced (which took over a second on
// a loaded machine, and the batch then ended without it).
func (s *Session) pageOpening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.opening.IsZero() && time.Since(s.opening) < pageAnnounce
}

// pageAnnounce bounds the wait for an opening page to be announced.
const pageAnnounce = 3 * time.Second

func (s *Session) pageNumberLocked(p playwright.Page) int {
	for i, have := range s.pages {
		if have == p {
			return i + 1
		}
	}
	return 0
}

// Dialogs returns every dialog of the session so far, oldest first.
func (s *Session) Dialogs() []Dialog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Dialog(nil), s.dialogs...)
}

// Pages lists the session's pages in the order they opened.
func (s *Session) Pages() []PageInfo {
	s.mu.Lock()
	pages := append([]playwright.Page(nil), s.pages...)
	cur := s.page
	s.mu.Unlock()
	out := make([]PageInfo, len(pages))
	for i, p := range pages {
		out[i] = PageInfo{Number: i + 1, URL: p.URL(), Current: p == cur, Closed: p.IsClosed()}
	}
	return out
}

// CurrentPage is the number of the page commands act on.
func (s *Session) CurrentPage() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pageNumberLocked(s.page)
}

// switchPage makes page n (1-based, as Pages numbers them) the one commands act on.
func (s *Session) switchPage(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || n < 1 || n > len(s.pages) {
		return fmt.Errorf("switch_page takes the number of an open page (1 to %d), got %q", len(s.pages), v)
	}
	p := s.pages[n-1]
	if p.IsClosed() {
		return fmt.Errorf("page %d is closed", n)
	}
	s.page = p
	return p.BringToFront()
}

// closePage closes page n (the current page when v is empty) and goes back
// to the most recently opened page still open.
func (s *Session) closePage(v string) error {
	s.mu.Lock()
	n := s.pageNumberLocked(s.page)
	if strings.TrimSpace(v) != "" {
		var err error
		if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 1 || n > len(s.pages) {
			s.mu.Unlock()
			return fmt.Errorf("close_page takes the number of an open page (1 to %d), got %q", len(s.pages), v)
		}
	}
	if n == 1 {
		s.mu.Unlock()
		return fmt.Errorf("the job's first page cannot be closed")
	}
	p := s.pages[n-1]
	s.mu.Unlock()
	if err := p.Close(); err != nil {
		return fmt.Errorf("close page %d: %w", n, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.page == p {
		for i := len(s.pages) - 1; i >= 0; i-- {
			if !s.pages[i].IsClosed() {
				s.page = s.pages[i]
				break
			}
		}
	}
	return nil
}

// setDialogAnswer says how the next dialog is answered.
func (s *Session) setDialogAnswer(v string) error {
	a, err := ParseDialogAnswer(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.nextDialog = &a
	if a.Default {
		s.nextDialog = nil
	}
	s.mu.Unlock()
	return nil
}

// lastDialog is the message of the latest dialog, if any.
func (s *Session) lastDialog() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dialogs) == 0 {
		return "", false
	}
	return s.dialogs[len(s.dialogs)-1].Message, true
}
