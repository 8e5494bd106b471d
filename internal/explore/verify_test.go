package explore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/specrun"
)

// fakeRunner stands in for the runner (the RunFunc seam): each test of a
// spec fails at its check when shows says the bug shows on that run.
type fakeRunner struct {
	runs int
	// broken findings bring down any process they run in.
	broken map[int]bool
	// shows says whether the bug of finding seq shows on its nth run.
	shows func(seq, n int) bool
	count map[int]int
}

var describeRe = regexp.MustCompile(`^test\.describe\('(finding (\d+)[^']*)'`)

func (f *fakeRunner) run(_ context.Context, spec string) ([]specrun.TestResult, error) {
	f.runs++
	var out []specrun.TestResult
	title, seq := "", 0
	for i, line := range strings.Split(spec, "\n") {
		if m := describeRe.FindStringSubmatch(line); m != nil {
			title = m[1]
			fmt.Sscan(m[2], &seq)
			if f.broken[seq] {
				return nil, errors.New("signal: killed")
			}
		}
		if strings.Contains(line, "expect(pageErrors") {
			f.count[seq]++
			r := specrun.TestResult{Title: title + " reproduces", Status: "passed"}
			if f.shows(seq, f.count[seq]) {
				r.Status, r.Line, r.Error = "failed", i+1, "boom"
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func TestVerificationScalesAndSaysWhyAFindingIsNotConfirmed(t *testing.T) {
	t.Parallel()
	res := Result{StartURL: "http://a.test/"}
	for seq := 1; seq <= 2*ReproBatch+1; seq++ {
		res.Findings = append(res.Findings, Finding{Seq: seq, Type: TypePageError, Title: fmt.Sprintf("error %d", seq),
			Check: Check{Kind: CheckNoPageError, Text: "boom"}, Base: 1, Trigger: 0,
			Path: []orchestrator.ManifestEntry{{Command: browser.Command{Action: browser.ActionNavigate, Value: fmt.Sprintf("http://a.test/p%d", seq)}}}})
	}
	f := &fakeRunner{broken: map[int]bool{5: true}, count: map[int]int{}, shows: func(seq, n int) bool {
		switch seq {
		case 7:
			return n == 2 || n == 4 // shows on two of its four replays, not the first run
		case 9:
			return false // never shows
		}
		return true
	}}
	if err := Verify(context.Background(), f.run, &res); err != nil {
		t.Fatal(err)
	}
	for _, fd := range res.Findings {
		rep := fd.Reproduction
		switch fd.Seq {
		case 5:
			if fd.Confidence != ConfidenceUnconfirmed || rep.Outcome != ReproNotRun || !strings.Contains(rep.Detail, "signal: killed") {
				t.Errorf("the finding that kills its runner: %s %+v", fd.Confidence, rep)
			}
		case 7:
			if fd.Confidence != ConfidenceIntermittent || rep.Rate != "2/5" {
				t.Errorf("the intermittent finding: %s, rate %q (%s)", fd.Confidence, rep.Rate, rep.Detail)
			}
		case 9:
			if fd.Confidence != ConfidenceUnconfirmed || !strings.Contains(rep.Detail, "never showed") {
				t.Errorf("the finding that never shows: %s (%s)", fd.Confidence, rep.Detail)
			}
		default:
			if fd.Confidence != ConfidenceConfirmed || !rep.Verified {
				t.Errorf("finding %d: %s %+v", fd.Seq, fd.Confidence, rep)
			}
		}
	}
	if want := "14 of 17 reproductions verified; 1 intermittent; 1 not_run; 1 passes"; res.Verification != want {
		t.Errorf("verification: %q, want %q", res.Verification, want)
	}
	// Three batches; the one the broken finding killed again one by one
	// (8); three paths for the two that did not show; one recheck.
	if f.runs > 3+8+4+1 {
		t.Errorf("%d runner processes", f.runs)
	}
}

func TestARerunSaysWhatIsNewStillOpenAndFixed(t *testing.T) {
	t.Parallel()
	finding := func(seq int, sig string) Finding {
		return Finding{Seq: seq, Type: TypePageError, Title: "error " + sig, Signature: sig, Check: Check{Kind: CheckNoPageError, Text: "boom"},
			Base: 1, Path: []orchestrator.ManifestEntry{{Command: browser.Command{Action: browser.ActionNavigate, Value: "http://a.test/" + sig}}}}
	}
	// The previous run's findings, each with its verified reproduction.
	prior := []Prior{}
	for seq, sig := range []string{"still", "fixed", "missed", "moved", "unproved"} {
		f := finding(seq+1, sig)
		spec, line := reproSpec("http://a.test/", f, f.Path, nil)
		p := Prior{Seq: seq + 1, Type: f.Type, Title: f.Title, URL: "http://a.test/" + sig, Signature: sig, Spec: spec, CheckLine: line}
		if sig == "unproved" {
			p.Spec = ""
		}
		prior = append(prior, p)
	}
	res := Result{StartURL: "http://a.test/", Findings: []Finding{finding(1, "still"), finding(2, "brand-new")}}
	Compare(&res, "job-1", prior)
	if res.Findings[0].Status != StatusStillOpen || res.Findings[1].Status != StatusNew {
		t.Errorf("statuses: %q %q", res.Findings[0].Status, res.Findings[1].Status)
	}
	// The runner: the fixed one passes, the missed one fails at its check,
	// the moved one fails on its path.
	run := func(_ context.Context, spec string) ([]specrun.TestResult, error) {
		var out []specrun.TestResult
		title := ""
		for i, line := range strings.Split(spec, "\n") {
			if m := regexp.MustCompile(`^test\.describe\('(prior \d+)'`).FindStringSubmatch(line); m != nil {
				title = m[1] + " reproduces"
			}
			switch {
			case title == "prior 2 reproduces" && strings.Contains(line, "expect(pageErrors"):
				out = append(out, specrun.TestResult{Title: title, Status: "passed"})
			case title == "prior 3 reproduces" && strings.Contains(line, "expect(pageErrors"):
				out = append(out, specrun.TestResult{Title: title, Status: "failed", Line: i + 1})
			case title == "prior 4 reproduces" && strings.Contains(line, "page.goto('/moved')"):
				out = append(out, specrun.TestResult{Title: title, Status: "failed", Line: i + 1, Error: "net::ERR_CONNECTION_REFUSED"})
			}
		}
		return out, nil
	}
	if err := Recheck(context.Background(), run, &res); err != nil {
		t.Fatal(err)
	}
	c := res.Comparison
	seqs := func(ps []Prior) (out []int) {
		for _, p := range ps {
			out = append(out, p.Seq)
		}
		return out
	}
	if c.New != 1 || c.StillOpen != 1 || fmt.Sprint(seqs(c.Fixed)) != "[2]" || fmt.Sprint(seqs(c.Missed)) != "[3]" ||
		fmt.Sprint(seqs(c.NotRechecked)) != "[5 4]" {
		t.Errorf("comparison: new %d, still open %d, fixed %v, missed %v, not rechecked %+v", c.New, c.StillOpen, seqs(c.Fixed), seqs(c.Missed), c.NotRechecked)
	}
	for _, p := range c.NotRechecked {
		if p.Why == "" {
			t.Errorf("prior %d not rechecked without a reason", p.Seq)
		}
	}
}
