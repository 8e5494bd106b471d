// Package chromium says how every Chromium webpilot starts is started:
// which binary, with which flags, at which priority. The agent's browser
// (internal/browser), the spec runner (internal/specrun) and customers'
// runs in the sandbox (internal/suite) take it from here, so that a flag
// one of them needs (WebRTC only through the proxy) is never missing from
// another.
package chromium

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// HeadlessShell is Debian's chromium-headless-shell: Chromium's old
// headless shell, the browser @playwright/test itself runs for headless
// Chromium (so a customer's tests run here in the browser they run in at
// home). It takes about a third of the CPU of the full browser's headless
// mode for the same tests (10 tests: 3.3 CPU-seconds against 8.8).
const HeadlessShell = "/usr/lib/chromium/chromium-headless-shell"

// Full is Debian's full Chromium, which a headful session needs
// (the headless shell draws no window).
const Full = "/usr/lib/chromium/chromium"

// capSysNice is CAP_SYS_NICE's bit in a capability set.
const capSysNice = 23

var args = []string{
	"--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
	// WebRTC may only use the (egress) proxy: no direct UDP to any address.
	// The full browser reads the first switch and ignores the force- form;
	// the headless shell reads only the force- form (with either alone, the
	// other's STUN probe reached a UDP canary: TestNoBareConnectionGetsOut).
	"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
}

// Args are the flags every Chromium is started with: the agent's, the
// spec runner's and a sandboxed run's (and the bench's peer's).
func Args() []string { return append([]string(nil), args...) }

// Unraised is what a command line starts with so that the processes it
// starts (a runner and its Chromium) cannot raise their priority above
// this process's: nil when this process cannot either, or has no setpriv.
func Unraised() []string {
	if !holdsCap(capSysNice) {
		return nil
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil
	}
	return []string{setpriv, "--bounding-set=-sys_nice", "--inh-caps=-sys_nice", "--"}
}

// holdsCap says whether this process's effective capabilities hold bit.
func holdsCap(bit uint) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "CapEff:"); ok {
			v, err := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			return err == nil && v&(1<<bit) != 0
		}
	}
	return false
}
