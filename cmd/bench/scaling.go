package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/worker"
)

// The scaling area measures what the capacity model in the README's
// Scaling section is built from, on this machine: browser contexts'
// memory, jobs per minute per core at rising concurrency for deterministic
// and agent-heavy jobs, and what one job costs PostgreSQL and NATS.

// deterministicSteps is a job no model takes part in.
var deterministicSteps = []string{
	`Fill "New item" with "Oat milk"`, `Click "Add"`, `Verify "Oat milk" is visible`,
	`Fill "New item" with "Rye"`, `Click "Add"`, `Verify "3 items" is visible`,
}

// agentSteps is the same job with both adds left to the agent (the step
// cache off, so each is a model call).
var agentSteps = []string{
	`Fill "New item" with "Oat milk"`, "Add the typed item to the list", `Verify "Oat milk" is visible`,
	`Fill "New item" with "Rye"`, "Add the typed item to the list", `Verify "3 items" is visible`,
}

var addReply = llmtest.Reply{PromptTokens: 1800, CompletionTokens: 60, Content: llmtest.JSON(map[string]any{
	"status": "complete", "reasoning": "the item is typed; submit it",
	"commands": []map[string]any{{"action": "click", "target": map[string]string{"role": "button", "name": "Add"}}}})}

type throughput struct {
	concurrency int
	jobs        int
	wall        time.Duration
	perMinCore  float64
}

type costs struct {
	pgCommits, pgRows float64 // per job
	pgBytes           float64 // database growth per job

	natsIn, natsOut float64 // per job
}

func (e *env) scalingBench(ctx context.Context, submitRate float64) error {
	cores := runtime.NumCPU()
	demo := httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	defer demo.Close()
	pages := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(testdataDir("cmd/bench"), "peer"))))
	defer pages.Close()

	demoMB, err := e.contextMemory(ctx, demo.URL+"/list", 8)
	if err != nil {
		return err
	}
	largeMB, err := e.contextMemory(ctx, pages.URL+"/large.html", 8)
	if err != nil {
		return err
	}
	model := llmtest.Start()
	defer model.Close()
	model.Fallback = &addReply

	const n = 24
	var det, agent []throughput
	var detCost, agentCost costs
	for _, c := range []int{1, 2, 4, 8} {
		tp, cost, err := e.throughput(ctx, demo.URL, deterministicSteps, nil, c, n, cores)
		if err != nil {
			return fmt.Errorf("deterministic at %d: %w", c, err)
		}
		det, detCost = append(det, tp), cost
	}
	for _, c := range []int{2, 4, 8} {
		tp, cost, err := e.throughput(ctx, demo.URL, agentSteps, model, c, n, cores)
		if err != nil {
			return fmt.Errorf("agent-heavy at %d: %w", c, err)
		}
		agent, agentCost = append(agent, tp), cost
	}

	fmt.Printf("Capacity on this machine (%d cores; dispatcher, worker, PostgreSQL, NATS and Chromium share them)\n", cores)
	fmt.Printf("  %-58s %12s\n", "measure", "value")
	fmt.Printf("  %-58s %9.0f MB\n", "memory per browser context, demo app list page (PSS)", demoMB)
	fmt.Printf("  %-58s %9.0f MB\n", "memory per browser context, 2,000-element page (PSS)", largeMB)
	for _, tp := range det {
		fmt.Printf("  %-58s %9.1f /min\n", fmt.Sprintf("deterministic 6-step jobs per core, %d at once (%d jobs, %s)", tp.concurrency, tp.jobs, tp.wall.Round(100*time.Millisecond)), tp.perMinCore)
	}
	for _, tp := range agent {
		fmt.Printf("  %-58s %9.1f /min\n", fmt.Sprintf("agent-heavy jobs (2 model calls) per core, %d at once (%s)", tp.concurrency, tp.wall.Round(100*time.Millisecond)), tp.perMinCore)
	}
	if submitRate > 0 {
		fmt.Printf("  %-58s %9.0f /s\n", "submissions accepted per core (dispatcher and PostgreSQL)", submitRate/float64(cores))
	}
	fmt.Printf("  %-58s %12.1f\n", "PostgreSQL commits per deterministic job", detCost.pgCommits)
	fmt.Printf("  %-58s %12.1f\n", "PostgreSQL rows written per deterministic job", detCost.pgRows)
	fmt.Printf("  %-58s %12.1f\n", "PostgreSQL commits per agent-heavy job", agentCost.pgCommits)
	fmt.Printf("  %-58s %12.1f\n", "PostgreSQL rows written per agent-heavy job", agentCost.pgRows)
	fmt.Printf("  %-58s %9.0f kB\n", "PostgreSQL growth per agent-heavy job (step pictures on)", agentCost.pgBytes/1024)
	fmt.Printf("  %-58s %12.1f\n", "NATS messages in per job (publish, fetches, progress, acks)", detCost.natsIn)
	fmt.Printf("  %-58s %12.1f\n", "NATS messages out per job", detCost.natsOut)
	best := func(ts []throughput) (float64, int) {
		var b float64
		var at int
		for _, t := range ts {
			if t.perMinCore > b*1.05 { // a higher concurrency must buy 5% more to count
				b, at = t.perMinCore, t.concurrency
			}
		}
		return b, at
	}
	detBest, detAt := best(det)
	agentBest, agentAt := best(agent)
	fmt.Printf("bench scaling: cores=%d context_mb=%.0f large_context_mb=%.0f contexts_per_core=%.1f det_jobs_per_min_core=%.1f agent_jobs_per_min_core=%.1f submits_per_s_core=%.0f pg_commits_per_job=%.1f pg_rows_per_job=%.1f pg_kb_per_job=%.0f nats_msgs_per_job=%.1f\n",
		cores, demoMB, largeMB, float64(max(detAt, agentAt))/float64(cores), detBest, agentBest, submitRate/float64(cores),
		agentCost.pgCommits, agentCost.pgRows, agentCost.pgBytes/1024, detCost.natsIn+detCost.natsOut)
	fmt.Println()
	return nil
}

// contextMemory opens n contexts, each with a page at url, and returns the
// growth of the browser's proportional set size per context, in MB.
func (e *env) contextMemory(ctx context.Context, url string, n int) (float64, error) {
	policy := netguard.New([]string{"127.0.0.1"})
	before := descendantsPSS(os.Getpid())
	var sessions []*browser.Session
	defer func() {
		for _, s := range sessions {
			_ = s.Close()
		}
	}()
	for range n {
		s, err := e.browser.NewSession(ctx, browser.SessionOptions{Policy: policy, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return 0, err
		}
		sessions = append(sessions, s)
		if err := s.Navigate(ctx, url); err != nil {
			return 0, err
		}
		if _, err := s.Snapshot(ctx, browser.SnapshotOptions{}); err != nil {
			return 0, err
		}
	}
	time.Sleep(500 * time.Millisecond)
	after := descendantsPSS(os.Getpid())
	return float64(after-before) / float64(n) / 1024, nil
}

// descendantsPSS sums the proportional set size (kB) of every process
// below pid: the Playwright driver and Chromium's processes.
func descendantsPSS(pid int) int64 {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		p, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		rest := b[bytes.LastIndexByte(b, ')')+2:]
		fields := strings.Fields(string(rest))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
	}
	var total int64
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			total += pss(c)
			walk(c)
		}
	}
	walk(pid)
	return total
}

func pss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// throughput runs n jobs of steps on a worker taking c at once and says how
// many finished per minute per core, and what each cost PostgreSQL and
// NATS.
func (e *env) throughput(ctx context.Context, demo string, steps []string, model *llmtest.Server, c, n, cores int) (throughput, costs, error) {
	if err := e.clear(ctx); err != nil {
		return throughput{}, costs{}, err
	}
	cfg := worker.Config{ID: fmt.Sprintf("scaling-%d", c), Concurrency: c, AckWait: 30 * time.Second, Store: e.st, Consumer: e.cons,
		Publisher: jobs.NewPublisher(e.js), Browser: e.browser, Policy: netguard.New([]string{"127.0.0.1"}), Sealer: e.sealer,
		Logger: slog.New(slog.DiscardHandler), StepShots: true} // as the worker runs by default
	if model != nil {
		cfg.Model = orchestrator.Model(llm.New(llm.Config{APIKey: "bench", BaseURL: model.BaseURL(), Model: "gpt-4o-mini"}))
	}
	w, err := worker.New(cfg)
	if err != nil {
		return throughput{}, costs{}, err
	}
	body, _ := json.Marshal(map[string]any{"kind": "scenario", "scenario": map[string]any{
		"name": "scaling", "base_url": demo + "/list", "steps": steps, "options": map[string]any{"no_step_cache": true}}})
	pg0, err := e.pgCounters(ctx)
	if err != nil {
		return throughput{}, costs{}, err
	}
	in0, out0 := e.natsCounters()
	var ids []string
	for range n {
		code, b, err := e.post(body)
		if err != nil || code != http.StatusAccepted {
			return throughput{}, costs{}, fmt.Errorf("submit: %d %s %v", code, b, err)
		}
		var v api.JobView
		_ = json.Unmarshal(b, &v)
		ids = append(ids, v.ID)
	}
	wctx, stop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	start := time.Now()
	go func() { _ = w.Run(wctx); close(wdone) }()
	defer func() { stop(); <-wdone }()
	polls := 0
	for deadline := time.Now().Add(10 * time.Minute); ; polls++ {
		var open, failed int
		if err := e.st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE state IN ('queued', 'running')),
			count(*) FILTER (WHERE state NOT IN ('queued', 'running', 'succeeded')) FROM jobs WHERE id = ANY($1::uuid[])`, ids).Scan(&open, &failed); err != nil {
			return throughput{}, costs{}, err
		}
		if failed > 0 {
			var msg string
			_ = e.st.Pool().QueryRow(ctx, `SELECT coalesce(error, state::text) FROM jobs WHERE id = ANY($1::uuid[]) AND state <> 'succeeded' LIMIT 1`, ids).Scan(&msg)
			return throughput{}, costs{}, fmt.Errorf("%d jobs did not succeed: %s", failed, msg)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			return throughput{}, costs{}, fmt.Errorf("%d of %d jobs still open after 10 minutes", open, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wall := time.Since(start)
	stop()
	<-wdone
	// Other sessions' statistics reach pg_stat views within a second.
	time.Sleep(1500 * time.Millisecond)
	pg1, err := e.pgCounters(ctx)
	if err != nil {
		return throughput{}, costs{}, err
	}
	in1, out1 := e.natsCounters()
	per := func(a, b int64) float64 { return float64(b-a) / float64(n) }
	// The bench's own polls and its first counter read committed too.
	pg1[0] -= int64(polls) + 1
	return throughput{concurrency: c, jobs: n, wall: wall, perMinCore: float64(n) / wall.Minutes() / float64(cores)},
		costs{pgCommits: per(pg0[0], pg1[0]), pgRows: per(pg0[1], pg1[1]), pgBytes: per(pg0[2], pg1[2]), natsIn: per(in0, in1), natsOut: per(out0, out1)}, nil
}

// pgCounters are the database's commits, rows inserted, updated and
// deleted, and size so far (the bench's own reads commit too, and are
// counted).
func (e *env) pgCounters(ctx context.Context) ([3]int64, error) {
	var c [3]int64
	err := e.st.Pool().QueryRow(ctx, `SELECT xact_commit, tup_inserted + tup_updated + tup_deleted, pg_database_size(current_database())
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&c[0], &c[1], &c[2])
	return c, err
}

// natsCounters are the server's messages in and out so far.
func (e *env) natsCounters() (int64, int64) {
	v, err := e.ns.Varz(&server.VarzOptions{})
	if err != nil {
		return 0, 0
	}
	return v.InMsgs, v.OutMsgs
}
