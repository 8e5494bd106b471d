package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/webpilot/webpilot/e2e/chaos"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/testslot"
)

// buildWorker compiles cmd/worker for the test.
func buildWorker(t *testing.T) string {
	t.Helper()
	return buildCmd(t, "worker")
}

// buildCmd compiles one of the project's commands into bin/ of a checkout
// laid out as make leaves one: its .cache is the project's, where make
// setup installed the driver and the runner.
func buildCmd(t *testing.T, name string) string {
	t.Helper()
	bin, err := chaos.Build(context.Background(), t.TempDir(), name, filepath.Dir(browsertest.DriverDir()))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// workerProcess starts cmd/worker as a real process against the stack, the
// way the README starts it: from another directory than its checkout, with
// the driver and the spec runner where make setup put them and no variable
// naming them.
func (s *stack) workerProcess(t *testing.T, bin, id string, model *llmtest.Server) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = t.TempDir()
	var inherited []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PLAYWRIGHT_DRIVER_PATH=") && !strings.HasPrefix(kv, "WEBPILOT_SPEC_RUNNER=") {
			inherited = append(inherited, kv)
		}
	}
	cmd.Env = append(inherited,
		"DATABASE_URL="+s.dbURL,
		"NATS_URL="+s.queue.Server.ClientURL(),
		"WEBPILOT_NATS_TOKEN="+s.queue.Token,
		"WEBPILOT_SECRET_KEY="+s.sealKey,
		"WEBPILOT_ALLOW_HOSTS=127.0.0.1",
		"WEBPILOT_ACK_WAIT="+s.ackWait.String(),
		"WEBPILOT_WORKER_ID="+id,
		"WEBPILOT_DATA_DIR="+t.TempDir(),
		"OPENAI_API_KEY=test", "OPENAI_BASE_URL="+model.BaseURL(), "WEBPILOT_MODEL=gpt-4o-mini",
	)
	logf, err := os.Create(filepath.Join(t.TempDir(), id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", id, b)
		}
	})
	return cmd
}

func TestWorkerKilledMidJobResumesAndChargesOnce(t *testing.T) {
	t.Parallel()
	bin := buildWorker(t)
	// The report page takes 2.5s, which keeps the job running after the kill point.
	s := newStack(t, 2*time.Second, 2500*time.Millisecond)
	usage := llm.Usage{PromptTokens: 3000, CachedTokens: 1000, CompletionTokens: 150}
	model := llmtest.New(t, llmtest.Reply{Content: llmtest.JSON(map[string]any{"status": "complete", "reasoning": "sign in",
		"commands": []map[string]any{
			{"action": "fill", "target": map[string]string{"label": "Password"}, "value": "{{PASSWORD}}"},
			{"action": "click", "target": map[string]string{"role": "button", "name": "Sign in"}},
		}}), PromptTokens: usage.PromptTokens, CachedTokens: usage.CachedTokens, CompletionTokens: usage.CompletionTokens})
	tenantID, key := s.tenant(t, "crashy", 4)

	first := s.workerProcess(t, bin, "worker-1", model)
	job := s.submit(t, key, map[string]any{
		"name": "survives a crash", "base_url": s.demo + "/login",
		"secrets": map[string]string{"PASSWORD": demoapp.Password},
		"steps": []any{
			`Fill "Email" with "` + demoapp.Email + `"`,
			"Sign in with the password",
			"Go to /delayed",
			`Verify "Report ready" is visible`,
		},
	})

	// Kill the first worker (SIGKILL: no drain, no ack) once the agent step is checkpointed.
	s.waitCheckpoint(t, job.ID, 2)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	var state string
	_ = s.store.Pool().QueryRow(context.Background(), `SELECT state FROM jobs WHERE id = $1`, job.ID).Scan(&state)
	if state != "running" {
		t.Fatalf("the job was %s when its worker died; the test did not interrupt it", state)
	}

	s.workerProcess(t, bin, "worker-2", model)
	v := s.wait(t, key, job.ID, 90*time.Second)
	if v.State != "succeeded" || v.Attempt != 2 {
		t.Fatalf("job ended %s after %d attempts: %s", v.State, v.Attempt, v.Error)
	}
	var steps []struct {
		Index  int
		Status string
		Tier   string
	}
	_ = json.Unmarshal(v.Steps, &steps)
	if len(steps) != 4 || steps[1].Tier != "agent" {
		t.Fatalf("steps after resume: %+v", steps)
	}
	// Attempt 2 resumed after the checkpoint: steps 1-2 ran once, in attempt 1.
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1 AND attempt = 2 AND step <= 2`, job.ID); n != 0 {
		t.Fatalf("attempt 2 re-ran %d commands of completed steps", n)
	}
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1 AND attempt = 2 AND step = 4 AND result = 'ok'`, job.ID); n != 1 {
		t.Fatalf("attempt 2 did not run step 4")
	}
	// One model call, charged once.
	want := llm.DefaultPrices.MicroCredits("gpt-4o-mini", usage)
	if n := s.count(t, `SELECT count(*) FROM token_usage WHERE job_id = $1 AND model <> $2`, job.ID, store.BrowserTime); n != 1 {
		t.Fatalf("%d model usage rows, want 1", n)
	}
	// Both attempts' browser time is charged too, each row once.
	_, browser, rows := s.browserTime(t, job.ID)
	if n := s.count(t, `SELECT count(*) FROM credit_entries WHERE job_id = $1`, job.ID); n != 1+rows {
		t.Fatalf("%d ledger entries for the job, want 1 and %d for browser time", n, rows)
	}
	if a := s.account(t, tenantID); a.Balance != 4_000_000-want-browser || a.Held != 0 {
		t.Fatalf("account = %+v, want balance %d and nothing held", a, 4_000_000-want-browser)
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE state = 'succeeded'`); n != 1 {
		t.Fatalf("%d succeeded jobs", n)
	}
	if s.queue.Pending(t) != 0 {
		t.Fatal("the job's message is still in the stream")
	}
	_, script := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil)
	for _, want := range []string{"// step 2: Sign in with the password", "fill(process.env.PASSWORD ?? '')", "// step 4:"} {
		if !strings.Contains(string(script), want) {
			t.Fatalf("script lacks %q:\n%s", want, script)
		}
	}
}

// killWorker SIGKILLs a worker process (no drain, no ack) and checks that
// the job was still running, so the test really interrupted it.
func (s *stack) killWorker(t *testing.T, w *exec.Cmd, jobID string) {
	t.Helper()
	if err := w.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = w.Wait()
	var state string
	_ = s.store.Pool().QueryRow(context.Background(), `SELECT state FROM jobs WHERE id = $1`, jobID).Scan(&state)
	if state != "running" {
		t.Fatalf("the job was %s when its worker died; the test did not interrupt it", state)
	}
}

func TestWorkerKilledBetweenFillAndClickResumesExactly(t *testing.T) {
	testslot.Long(t)
	t.Parallel()
	bin := buildWorker(t)
	s := newStack(t, 2*time.Second, 0)
	model := llmtest.New(t)
	_, key := s.tenant(t, "exact", 4)
	sc := map[string]any{
		"name": "add to the list after signing in", "base_url": s.demo + "/login",
		"data":    map[string]string{"EMAIL": demoapp.Email},
		"secrets": map[string]string{"PASSWORD": demoapp.Password},
		"steps": []any{
			`Fill "Email" with "{{EMAIL}}"`, `Fill "Password" with "{{PASSWORD}}"`, `Click "Sign in"`,
			"Go to /list", `Fill "New item" with "Oat milk"`, `Click "Add"`, `Fill "New item" with "Rye"`,
			"Wait 4000ms", `Click "Add"`, `Verify "Rye" is visible`, `Verify "3 items" is visible`,
		},
	}
	first := s.workerProcess(t, bin, "worker-1", model)
	// The spec of an uninterrupted run, to compare with.
	whole := s.submit(t, key, sc)
	if v := s.wait(t, key, whole.ID, 60*time.Second); v.State != "succeeded" {
		t.Fatalf("uninterrupted job ended %s: %s", v.State, v.Error)
	}
	_, want := s.call(t, "GET", "/v1/jobs/"+whole.ID+"/script", key, nil)

	job := s.submit(t, key, sc)
	s.waitCheckpoint(t, job.ID, 7) // "Rye" is typed; the click that adds it has not run
	s.killWorker(t, first, job.ID)
	s.workerProcess(t, bin, "worker-2", model)
	v := s.wait(t, key, job.ID, 90*time.Second)
	if v.State != "succeeded" || v.Attempt != 2 {
		t.Fatalf("job ended %s after %d attempts: %s", v.State, v.Attempt, v.Error)
	}
	_, got := s.call(t, "GET", "/v1/jobs/"+job.ID+"/script", key, nil)
	if string(got) != string(want) {
		t.Fatalf("the resumed job's spec differs:\n%s\n--- uninterrupted ---\n%s", got, want)
	}
	// Completed steps were not run again as steps: attempt 2 ran steps 8 to 11.
	if n := s.count(t, `SELECT count(*) FROM history WHERE job_id = $1 AND attempt = 2 AND step <= 7`, job.ID); n != 0 {
		t.Fatalf("attempt 2 re-ran %d commands of completed steps", n)
	}
}

func TestWorkerKilledMidModelCallIsChargedItsReservation(t *testing.T) {
	t.Parallel()
	bin := buildWorker(t)
	s := newStack(t, 2*time.Second, 0)
	answer := llmtest.JSON(map[string]any{"status": "complete", "reasoning": "open the list",
		"commands": []map[string]any{{"action": "click", "target": map[string]string{"role": "link", "name": "Shopping list"}}}})
	usage := llm.Usage{PromptTokens: 2000, CompletionTokens: 50}
	// The first answer comes too late for the first worker; the second is prompt.
	model := llmtest.New(t,
		llmtest.Reply{Content: answer, PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens, Delay: 20 * time.Second},
		llmtest.Reply{Content: answer, PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens})
	tenantID, key := s.tenant(t, "mid-call", 4)
	first := s.workerProcess(t, bin, "worker-1", model)
	job := s.submit(t, key, map[string]any{"name": "one agent step", "base_url": s.demo + "/",
		"steps": []any{"Find the shopping list and open it", `Verify "Shopping list" is visible`}})
	for deadline := time.Now().Add(30 * time.Second); len(model.Requests()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the model was never called")
		}
	}
	s.killWorker(t, first, job.ID)
	s.workerProcess(t, bin, "worker-2", model)
	v := s.wait(t, key, job.ID, 60*time.Second)
	if v.State != "succeeded" {
		t.Fatalf("job ended %s: %s", v.State, v.Error)
	}
	// The call in flight when the worker died was charged at its reserved
	// maximum (its reply may have been billed); the retried call at its usage.
	var orphanCredits, orphanReserved, retried int64
	if err := s.store.Pool().QueryRow(context.Background(),
		`SELECT credits, reserved FROM token_usage WHERE job_id = $1 AND attempt = 1 AND state = 'settled' AND model <> $2`, job.ID, store.BrowserTime).
		Scan(&orphanCredits, &orphanReserved); err != nil {
		t.Fatalf("the first attempt's call has no settled charge: %v", err)
	}
	if orphanCredits != orphanReserved || orphanCredits == 0 {
		t.Fatalf("orphaned call charged %d of its %d reservation", orphanCredits, orphanReserved)
	}
	if err := s.store.Pool().QueryRow(context.Background(),
		`SELECT credits FROM token_usage WHERE job_id = $1 AND attempt = 2 AND state = 'settled' AND model <> $2`, job.ID, store.BrowserTime).Scan(&retried); err != nil {
		t.Fatal(err)
	}
	if want := llm.DefaultPrices.MicroCredits("gpt-4o-mini", usage); retried != want {
		t.Fatalf("retried call charged %d, want %d", retried, want)
	}
	if n := s.count(t, `SELECT count(*) FROM token_usage WHERE job_id = $1 AND state = 'reserved'`, job.ID); n != 0 {
		t.Fatalf("%d reservations left open", n)
	}
	_, browser, _ := s.browserTime(t, job.ID)
	if a := s.account(t, tenantID); a.Balance != 4_000_000-orphanCredits-retried-browser || a.Held != 0 {
		t.Fatalf("account = %+v, want balance %d", a, 4_000_000-orphanCredits-retried-browser)
	}
}

// TestAWorkerThatDiesBesideTwoTenantsBlamesNeither: a worker process dies
// (SIGKILL) while it runs two tenants' jobs. Either may have taken it down,
// so neither is counted a crash (before, both were, and a second shared
// death failed the bystander's job as one that kills its workers); each
// is run again alone, so that a death then is its own: the next worker
// runs their second attempts one after the other, never side by side.
func TestAWorkerThatDiesBesideTwoTenantsBlamesNeither(t *testing.T) {
	t.Parallel()
	bin := buildWorker(t)
	s := newStack(t, 2*time.Second, 2500*time.Millisecond)
	model := llmtest.New(t)
	var ids []string
	keys := map[string]string{}
	for _, name := range []string{"bomber", "bystander"} {
		_, key := s.tenant(t, name, 4)
		job := s.submit(t, key, map[string]any{"name": "waits for the report", "base_url": s.demo,
			"steps": []any{"Go to /delayed", `Verify "Report ready" is visible`}})
		ids = append(ids, job.ID)
		keys[job.ID] = key
	}
	first := s.workerProcess(t, bin, "worker-1", model)
	deadline := time.Now().Add(30 * time.Second)
	for s.count(t, `SELECT count(*) FROM jobs WHERE state = 'running' AND worker_id IS NOT NULL`) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the two jobs never ran side by side")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.killWorker(t, first, ids[0])
	s.workerProcess(t, bin, "worker-1", model) // restarted under the same ID
	for _, id := range ids {
		if v := s.wait(t, keys[id], id, 90*time.Second); v.State != "succeeded" || v.Attempt != 2 {
			t.Fatalf("%s ended %s after %d attempts: %s", id, v.State, v.Attempt, v.Error)
		}
	}
	if n := s.count(t, `SELECT count(*) FROM jobs WHERE crashes > 0`); n != 0 {
		t.Errorf("%d jobs were blamed for a death they shared", n)
	}
	// The second attempts' commands do not interleave.
	var overlap bool
	if err := s.store.Pool().QueryRow(context.Background(),
		`SELECT max(a.id) > min(b.id) AND max(b.id) > min(a.id) FROM history a, history b
		 WHERE a.job_id = $1 AND b.job_id = $2 AND a.attempt = 2 AND b.attempt = 2`, ids[0], ids[1]).Scan(&overlap); err != nil {
		t.Fatal(err)
	}
	if overlap {
		t.Error("the two jobs ran side by side again after their worker died running them")
	}
}
