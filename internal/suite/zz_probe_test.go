package suite_test

import (
	"os"
	"testing"

	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/suite/suitetest"
)

func TestZZProbeFailureDOM(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip()
	}
	b, app := practiceBench(t)
	app.Set(demoapp.PracticeDrift)
	for _, name := range []string{"hooks-media"} {
		p, err := suitetest.RealWorldProject(name)
		if err != nil {
			t.Fatal(err)
		}
		rep := b.run(t, p, suite.RunOptions{Trace: true, TraceFailures: true, NoRetries: true})
		for i := range rep.Tests {
			tc := &rep.Tests[i]
			if tc.Status != "failed" {
				continue
			}
			err := tc.Evidence()
			dom, derr := suite.FailureDOM(rep.Dir, tc.Trace)
			tags := []string{}
			for _, e := range dom {
				tags = append(tags, e.Tag)
			}
			t.Logf("ERR %s\n", tc.Error); t.Logf("%s %s: evidence %v, trace %s, dom %d %v (%v); failure %+v", name, tc.Title(), err, tc.Trace, len(dom), tags, derr, tc.Failure)
			if len(dom) < 5 && os.Getenv("KEEP") != "" {
				_ = os.MkdirAll("/tmp/probe", 0o755)
				raw, _ := os.ReadFile(rep.Dir + "/" + tc.Trace)
				_ = os.WriteFile("/tmp/probe/"+name+"-"+tc.ID+".zip", raw, 0o644)
			}
		}
	}
}
