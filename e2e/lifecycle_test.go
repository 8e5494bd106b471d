package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/reconcile"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/worker"
)

// scenarioJSON encodes a scenario the way the dispatcher stores it.
func scenarioJSON(t *testing.T, base string, steps ...string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{"name": "direct", "base_url": base, "steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLostPublishIsRepublishedByTheReconciler(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	s.startWorker(t, nil)
	tenantID, key := s.tenant(t, "lost", 5)
	// The dispatcher committed the job but died before publishing it.
	j, err := s.store.SubmitJob(context.Background(), store.NewJob{TenantID: tenantID, Kind: "scenario",
		Input: scenarioJSON(t, s.demo+"/login", `Verify "Log in" is visible`), Hold: 1_000_000,
		Subject: jobs.Subject(jobs.KindScenario, tenantID)})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if s.queue.Pending(t) != 0 {
		t.Fatal("the job was published although nobody published it")
	}
	loops, err := reconcile.New(reconcile.Config{Store: s.store, Publisher: jobs.NewPublisher(s.queue.JS), Logger: quietLog(),
		Unsent: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := loops.Republish(context.Background()); err != nil || n != 1 {
		t.Fatalf("republished %d jobs: %v", n, err)
	}
	// A second pass finds nothing left to do.
	if n, _ := loops.Republish(context.Background()); n != 0 {
		t.Fatalf("republished again: %d", n)
	}
	if v := s.wait(t, key, j.ID, 30*time.Second); v.State != "succeeded" {
		t.Fatalf("republished job ended %s: %s", v.State, v.Error)
	}
}

func TestCancelStopsARunningJobAndReleasesItsHold(t *testing.T) {
	t.Parallel()
	s := newStack(t, 3*time.Second, 0)
	s.startWorker(t, nil)
	tenantID, key := s.tenant(t, "canceller", 5)
	job := s.submit(t, key, map[string]any{"name": "slow", "base_url": s.demo + "/",
		"steps": []any{"Wait 1500ms", "Wait 1500ms", "Wait 1500ms", "Wait 1500ms", "Wait 1500ms", "Wait 1500ms"}})
	for deadline := time.Now().Add(20 * time.Second); ; {
		var v struct{ State string }
		s.mustJSON(t, "GET", "/v1/jobs/"+job.ID, key, nil, http.StatusOK, &v)
		if v.State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.mustJSON(t, "POST", "/v1/jobs/"+job.ID+"/cancel", key, nil, http.StatusAccepted, nil)
	v := s.wait(t, key, job.ID, 30*time.Second)
	if v.State != "cancelled" || v.Progress.Done >= 6 {
		t.Fatalf("job ended %s after %d steps", v.State, v.Progress.Done)
	}
	// It made no model call: it is charged the browser time it held.
	_, browser, _ := s.browserTime(t, job.ID)
	if a := s.account(t, tenantID); a.Held != 0 || a.Balance != 5_000_000-browser || browser <= 0 {
		t.Fatalf("account after cancel: %+v, want %d charged for browser time", a, browser)
	}
}

func TestBudgetExhaustedKeepsPartialResultsAndNeverSpendsPastTheHold(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	cases := []struct {
		name         string
		hold         float64
		promptTokens int // what the scripted endpoint reports per call
		wantCalls    int
		wantCharged  int64 // micro-credits
	}{
		// 10,000 prompt tokens cost 150,000 at gpt-4o-mini prices. The first
		// call's maximum (its prompt bytes and 2,000 completion tokens) fits
		// in 250,000; after it, what is left cannot cover another, so the
		// agent stops before the call, not after it.
		{"stops before the call that could cross the hold", 0.25, 10_000, 1, 150_000},
		// A hold smaller than any call's maximum: no call is made at all.
		{"a tiny hold makes no call", 0.01, 10_000_000, 0, 0},
		// An endpoint that reports far more than the call could have used is
		// charged the call's reservation, which the hold covered.
		{"over-reported usage is capped at the reservation", 0.3, 10_000_000, 1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply := llmtest.Reply{Content: `{"status":"continue","reasoning":"looking around"}`, PromptTokens: c.promptTokens}
			model := llmtest.New(t, reply, reply, reply, reply)
			stop := s.startWorkerWith(t, llm.New(llm.Config{APIKey: "k", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}), worker.Config{ID: c.name})
			defer stop()
			tenantID, key := s.tenant(t, c.name, 5)
			job := s.submit(t, key, map[string]any{"name": "expensive", "base_url": s.demo + "/",
				"options": map[string]any{"max_credits": c.hold},
				"steps":   []any{`Click "Shopping list"`, "Find something interesting", "Verify \"x\" is visible"}})
			v := s.wait(t, key, job.ID, 30*time.Second)
			if v.State != "budget_exhausted" || !strings.Contains(v.Error, "step 2") {
				t.Fatalf("job ended %s: %s", v.State, v.Error)
			}
			if v.Usage == nil || v.Usage.Calls != c.wantCalls || len(model.Requests()) != c.wantCalls {
				t.Fatalf("usage = %+v, %d requests to the model; want %d calls", v.Usage, len(model.Requests()), c.wantCalls)
			}
			hold := int64(c.hold * 1_000_000)
			charged := v.Usage.CreditsMicro // the model's calls and the browser's time
			_, browser, _ := s.browserTime(t, job.ID)
			calls := charged - browser
			if browser != v.Usage.BrowserCreditsMicro || browser <= 0 {
				t.Fatalf("browser time charged %d, the job shows %d", browser, v.Usage.BrowserCreditsMicro)
			}
			if c.wantCharged >= 0 && calls != c.wantCharged {
				t.Fatalf("model calls charged %d, want %d", calls, c.wantCharged)
			}
			if charged > hold || (c.wantCharged < 0 && calls == 0) {
				t.Fatalf("charged %d against a hold of %d", charged, hold)
			}
			// The deterministic first step's result is kept.
			if v.Progress.Done != 2 {
				t.Fatalf("steps reported: %d", v.Progress.Done)
			}
			if a := s.account(t, tenantID); a.Balance != 5_000_000-charged || a.Held != 0 || a.Balance < 0 {
				t.Fatalf("account = %+v", a)
			}
			if code, _ := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil); code != http.StatusOK {
				t.Fatalf("partial script not kept: %d", code)
			}
		})
	}
}

// TestADeterministicJobStopsWhenItsBrowserTimeIsNoLongerCovered: a job
// that makes no model call still pays for its browser time, 10 s at a time;
// when its hold cannot cover the next 10 s it stops at its next step,
// budget_exhausted, its first steps kept, and the tenant is charged what
// it held, never more.
func TestADeterministicJobStopsWhenItsBrowserTimeIsNoLongerCovered(t *testing.T) {
	t.Parallel()
	s := newStack(t, 30*time.Second, 0)
	s.startWorker(t, nil)
	tenantID, key := s.tenant(t, "metered", 1)
	job := s.submit(t, key, map[string]any{"name": "slow and cheap", "base_url": s.demo + "/",
		"options": map[string]any{"max_credits": 0.007},
		"steps":   []any{`Click "Shopping list"`, "Wait 6 seconds", "Wait 6 seconds", "Wait 6 seconds", `Verify "Shopping list" is visible`}})
	v := s.wait(t, key, job.ID, 60*time.Second)
	if v.State != "budget_exhausted" || !strings.Contains(v.Error, "browser time") || v.Progress.Done < 2 || v.Progress.Done >= 5 {
		t.Fatalf("job ended %s after %d steps: %s", v.State, v.Progress.Done, v.Error)
	}
	secs, browser, rows := s.browserTime(t, job.ID)
	// The first 10 s were charged whole when the next could not be
	// reserved; the 2,000 left of the hold never are.
	if browser != 5_000 || rows != 1 || secs < 10 || v.Usage.Calls != 0 {
		t.Fatalf("charged %d micro-credits for %.1f s in %d rows, want 5,000 for the first 10 s", browser, secs, rows)
	}
	if a := s.account(t, tenantID); a.Balance != 1_000_000-5_000 || a.Held != 0 {
		t.Fatalf("account %+v, want 5,000 charged and nothing held", a)
	}
	if code, _ := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil); code != http.StatusOK {
		t.Fatalf("the steps it ran were not kept as a spec: %d", code)
	}
}

func TestDrainHandsARunningJobBackToAnotherWorker(t *testing.T) {
	t.Parallel()
	s := newStack(t, 3*time.Second, 0)
	cases := []struct {
		name  string
		grace time.Duration // 0: hand back at the next step boundary at once
	}{{"after a grace", 300 * time.Millisecond}, {"without grace", 0}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A long hard stop: only handing back at the step boundary can end the drain quickly.
			stop := s.startWorkerWith(t, nil, worker.Config{ID: "draining " + c.name, DrainGrace: &c.grace, DrainHardStop: 30 * time.Second})
			_, key := s.tenant(t, "drained "+c.name, 5)
			var steps []any
			for range 12 {
				steps = append(steps, "Wait 400ms")
			}
			job := s.submit(t, key, map[string]any{"name": "long", "base_url": s.demo + "/", "steps": steps})
			s.waitCheckpoint(t, job.ID, 1)
			began := time.Now()
			stop() // SIGTERM: the job is handed back at its next step boundary once the grace is over
			took := time.Since(began)
			if limit := c.grace + 400*time.Millisecond + 3*time.Second; took > limit {
				t.Fatalf("the drain kept the job %s, want it handed back at the next step boundary (within %s)", took, limit)
			}
			var state string
			var next int
			_ = s.store.Pool().QueryRow(context.Background(), `SELECT state, (checkpoint->>'next_step')::int FROM jobs WHERE id = $1`, job.ID).Scan(&state, &next)
			if state != "running" || next >= 12 {
				t.Fatalf("after the drain the job is %s at step %d, want it handed back (still running, lease released)", state, next)
			}
			s.startWorkerWith(t, nil, worker.Config{ID: "successor " + c.name})
			v := s.wait(t, key, job.ID, 30*time.Second)
			if v.State != "succeeded" || v.Attempt != 2 || v.Progress.Done != 12 {
				t.Fatalf("job ended %s, attempt %d, %d steps: %s", v.State, v.Attempt, v.Progress.Done, v.Error)
			}
			// Attempt 1 stopped at a boundary: attempt 2 re-ran none of its steps.
			if n := s.count(t, `SELECT count(*) FROM history h1 JOIN history h2 ON h1.job_id = h2.job_id AND h1.step = h2.step
				WHERE h1.job_id = $1 AND h1.attempt = 1 AND h2.attempt = 2`, job.ID); n != 0 {
				t.Fatal("the successor re-ran a step the drained worker had completed")
			}
		})
	}
}

func TestJobFailsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	s := newStack(t, 10*time.Second, 0)
	s.startWorkerWith(t, nil, worker.Config{MaxAttempts: 3})
	tenantID, key := s.tenant(t, "doomed", 5)
	j, err := s.store.SubmitJob(context.Background(), store.NewJob{TenantID: tenantID, Kind: "scenario",
		Input: scenarioJSON(t, s.demo+"/", "Go to /"), Hold: 1_000_000, Subject: jobs.Subject(jobs.KindScenario, tenantID)})
	if err != nil {
		t.Fatal(err)
	}
	// Three earlier attempts died with the job (their leases lapsed).
	if _, err := s.store.Pool().Exec(context.Background(),
		`UPDATE jobs SET state = 'running', attempt = 3, lease_until = now() - interval '1 minute' WHERE id = $1`, j.ID); err != nil {
		t.Fatal(err)
	}
	if err := jobs.NewPublisher(s.queue.JS).Publish(context.Background(), jobs.Subject(jobs.KindScenario, tenantID), j.ID, 0); err != nil {
		t.Fatal(err)
	}
	v := s.wait(t, key, j.ID, 30*time.Second)
	if v.State != "failed" || v.Error == "" {
		t.Fatalf("job ended %s: %q", v.State, v.Error)
	}
	if a := s.account(t, tenantID); a.Held != 0 {
		t.Fatalf("hold not released: %+v", a)
	}
}
