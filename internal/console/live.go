package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// live streams a job page's updates as server-sent events, each an HTML
// fragment rendered by the page's own templates: "step" for each step past
// ?from=, "head" when the state, progress or costs change, and "end" with
// the finished job's spec and reports, after which the stream closes.
func (c *Console) live(w http.ResponseWriter, r *http.Request, s session) {
	j, ok := c.loadJob(w, r, s)
	if !ok {
		return
	}
	sent, _ := strconv.Atoi(r.URL.Query().Get("from"))
	changed, stop, ok := c.api.Watch(s.Tenant.ID, j.ID)
	if !ok {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many live pages are open", http.StatusTooManyRequests)
		return
	}
	defer stop()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	lastSent := time.Now()
	write := func(s string) bool {
		// The server's write timeout would cut a long stream: each write extends it.
		_ = rc.SetWriteDeadline(time.Now().Add(time.Minute))
		if _, err := w.Write([]byte(s)); err != nil {
			return false
		}
		lastSent = time.Now()
		return rc.Flush() == nil
	}
	send := func(event, html string) bool {
		var b strings.Builder
		fmt.Fprintf(&b, "event: %s\n", event)
		for _, line := range strings.Split(html, "\n") {
			fmt.Fprintf(&b, "data: %s\n", line)
		}
		b.WriteString("\n")
		return write(b.String())
	}
	end := time.After(c.cfg.StreamLife)
	lastHead := ""
	for {
		v := c.api.JobView(r.Context(), j)
		list := steps(v)
		for ; sent < len(list); sent++ {
			html, err := c.fragment("step", list[sent])
			if err != nil || !send("step", html) {
				return
			}
		}
		head, err := c.fragment("head", jobHead{Job: v, CSRF: s.CSRF})
		if err != nil {
			return
		}
		if head != lastHead {
			if !send("head", head) {
				return
			}
			lastHead = head
		}
		if j.State.Terminal() {
			f, err := c.final(r.Context(), s, j, v)
			if err != nil {
				return
			}
			html, err := c.fragment("final", f)
			if err == nil {
				send("end", html)
			}
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-end:
			return
		case <-changed:
		case <-time.After(c.cfg.Poll):
			// A long step sends nothing: a comment keeps the connection
			// (and any proxy on the way) from timing out.
			if time.Since(lastSent) > 15*time.Second && !write(": keep-alive\n\n") {
				return
			}
		}
		if j, err = c.store.GetJob(r.Context(), s.Tenant.ID, j.ID); err != nil {
			return
		}
	}
}
