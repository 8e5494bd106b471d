package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/webpilot/webpilot/internal/chromium"
)

// withoutRaisedPriority returns how to start the Chromium at exe so that
// it cannot raise its own priority: the executable to give the driver, and
// what removes it once Chromium is no longer launched.
//
// With CAP_SYS_NICE (a worker running as root), Chromium sets its UI and
// compositor threads to nice -8: above the worker that drives it (its
// heartbeats, acks and store calls) and, with the CFS's weights, some 18
// times the CPU share of a sandboxed project run at nice 5, which then ran
// out of its own tests' timeouts whenever a page rendered beside it. A
// launcher that drops the capability from Chromium's bounding set (setpriv,
// as the sandbox uses it) keeps every browser thread at the worker's own
// priority or below. Without the capability, or without setpriv, exe is
// started as it is.
func withoutRaisedPriority(exe string) (string, func(), error) {
	none := func() {}
	prefix := chromium.Unraised()
	if prefix == nil {
		return exe, none, nil
	}
	dir, err := os.MkdirTemp("", "webpilot-chromium-")
	if err != nil {
		return "", none, fmt.Errorf("chromium's launcher: %w", err)
	}
	// exec keeps the file descriptors the driver talks to Chromium through
	// (--remote-debugging-pipe's 3 and 4).
	var line []string
	for _, a := range append(prefix, exe) {
		line = append(line, shellQuote(a))
	}
	script := "#!/bin/sh\nexec " + strings.Join(line, " ") + " \"$@\"\n"
	launcher := filepath.Join(dir, "chromium")
	if err := os.WriteFile(launcher, []byte(script), 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", none, fmt.Errorf("chromium's launcher: %w", err)
	}
	return launcher, func() { _ = os.RemoveAll(dir) }, nil
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
