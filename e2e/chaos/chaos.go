// Package chaos is a crash drill of the whole stack with real processes:
// jobs of several tenants (one capped at a single running job) run on
// worker processes that are SIGKILLed over and over, while NATS and
// PostgreSQL are each restarted once. Afterwards it counts what a customer
// would check: every job succeeded once with its whole spec, no hold is
// left, every balance equals its ledger and is not negative, and every
// model call the endpoint answered was charged exactly once. The test
// suite runs a small drill and make bench a larger one.
package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/netguard"
	"github.com/webpilot/webpilot/internal/outbox"
	"github.com/webpilot/webpilot/internal/reconcile"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// Config sizes a drill.
type Config struct {
	WorkerBin   string        // a built cmd/worker
	DriverDir   string        // PLAYWRIGHT_DRIVER_PATH for the workers
	Jobs        int           // spread over three tenants; at least 50 in the test
	Workers     int           // worker processes kept alive (2 jobs each)
	KillEvery   time.Duration // a random worker is SIGKILLed and replaced this often
	Deadline    time.Duration // for all jobs to end
	LogDir      string        // workers' logs (kept for a failed drill)
	Log         *slog.Logger
	AckWait     time.Duration // default 2s
	MaxAttempts int           // default 30: kills are many and frequent
	// CheckSpec, when set, runs each distinct succeeded spec (while the
	// drill's app is still up) and returns its failure.
	CheckSpec func(ctx context.Context, script string) error
}

// Report is what the drill found.
type Report struct {
	Jobs      int
	Succeeded int
	Failed    int
	Lost      int // never reached a final state, even once the kills stopped
	// Unfinished counts the jobs still queued or running at the deadline:
	// on a slow machine a job outlasts the drill without being lost. The
	// kills then stop and the drill waits (bounded) for them; one that
	// then ends, exactly once, is not lost.
	Unfinished       int
	Duplicated       int // jobs created beyond those submitted
	IncompleteSpecs  int // succeeded, but the spec lacks a step
	FailingSpecs     int // distinct succeeded specs that fail under the runner (Config.CheckSpec)
	DistinctSpecs    int // succeeded specs that differ other than in their test's name
	NegativeBalances int
	LedgerMismatches int // tenants whose balance is not the sum of their ledger
	HeldLeft         int64
	UnchargedCalls   int // answered by the model endpoint, never charged
	DoubleCharged    int
	AnsweredCalls    int
	Kills            int
	Errors           []string // failed jobs' errors, first few
	Duration         time.Duration
	SubmitRetries    int // submissions retried (503 during the database restart)
	ResumedAttempts  int // jobs that needed more than one attempt
}

// Line is the bench summary line for the drill.
func (r Report) Line() string {
	return fmt.Sprintf("bench chaos: jobs=%d succeeded=%d failed=%d lost=%d unfinished=%d duplicated=%d negative_balances=%d uncharged_calls=%d",
		r.Jobs, r.Succeeded, r.Failed, r.Lost, r.Unfinished, r.Duplicated, r.NegativeBalances, r.UnchargedCalls)
}

// OK says whether the drill found nothing wrong.
func (r Report) OK() bool {
	return r.Succeeded == r.Jobs && r.Failed == 0 && r.Lost == 0 && r.Duplicated == 0 && r.IncompleteSpecs == 0 && r.FailingSpecs == 0 &&
		r.NegativeBalances == 0 && r.LedgerMismatches == 0 && r.HeldLeft == 0 && r.UnchargedCalls == 0 && r.DoubleCharged == 0
}

// steps is every drill job's scenario: deterministic steps, an agent step
// (one model call), in-page state a resume must rebuild, and waits that
// keep jobs running while processes die.
var steps = []any{
	`Fill "New item" with "Oat milk"`,
	"Add the typed item to the list",
	`Verify "Oat milk" is visible`,
	`Fill "New item" with "Rye"`,
	"Wait 300ms",
	`Click "Add"`,
	`Verify "3 items" is visible`,
}

// stepsMust is what every succeeded spec of steps holds besides its steps.
var stepsMust = []string{"Rye", "3 items"}

// job is a drill's scenario and what each succeeded spec must hold.
type job struct {
	steps []any
	must  []string
}

// agentReply adds the typed item: a decision that does not depend on refs.
var agentReply = llmtest.Reply{PromptTokens: 1800, CompletionTokens: 60, Content: llmtest.JSON(map[string]any{
	"status": "complete", "reasoning": "the item is typed; submit it",
	"commands": []map[string]any{{"action": "click", "target": map[string]string{"role": "button", "name": "Add"}}}})}

type drill struct {
	cfg     Config
	log     *slog.Logger
	cluster *storetest.Cluster
	st      *store.Store
	ns      *server.Server
	natsDir string
	port    int
	token   string
	nc      *nats.Conn
	api     *httptest.Server
	sender  *outbox.Sender
	demo    *httptest.Server
	model   *llmtest.Server
	sealKey string

	mu      sync.Mutex
	workers map[int]*exec.Cmd
	nextID  int
	kills   int
}

// Run runs a drill and reports; an error means the drill itself could not run.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.AckWait == 0 {
		cfg.AckWait = 2 * time.Second
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 30
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.LogDir == "" {
		cfg.LogDir = os.TempDir()
	}
	d := &drill{cfg: cfg, log: cfg.Log, workers: map[int]*exec.Cmd{}}
	defer d.close()
	start := time.Now()
	if err := d.setUp(ctx); err != nil {
		return Report{}, err
	}
	rep, err := d.run(ctx)
	rep.Duration = time.Since(start)
	return rep, err
}

// startStore starts a PostgreSQL cluster of the drill's own (a drill may
// stop it) and opens its migrated store.
func startStore(ctx context.Context) (*storetest.Cluster, *store.Store, error) {
	pg, err := storetest.StartCluster()
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, pg.URL)
	if err == nil {
		err = st.Migrate(ctx)
	}
	if err != nil {
		if st != nil {
			st.Close()
		}
		pg.Remove()
		return nil, nil, err
	}
	return pg, st, nil
}

// Build compiles the project's command name (cmd/NAME) into dir/bin, and
// links dir/.cache to cache (where make setup installs the driver and the
// spec runner, when not empty): a checkout laid out as make leaves one, so
// the binary finds them as the README starts it, from any directory.
func Build(ctx context.Context, dir, name, cache string) (string, error) {
	if cache != "" {
		if err := os.Symlink(cache, filepath.Join(dir, ".cache")); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	bin := filepath.Join(dir, "bin", name)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/webpilot/webpilot/cmd/"+name).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return bin, nil
}

func (d *drill) setUp(ctx context.Context) error {
	var err error
	if d.cluster, d.st, err = startStore(ctx); err != nil {
		return err
	}
	if d.natsDir, err = os.MkdirTemp("", "webpilot-chaos-nats-"); err != nil {
		return err
	}
	if d.port, err = storetest.FreePort(); err != nil {
		return err
	}
	d.token = jobs.NewToken()
	if d.ns, err = jobs.StartEmbedded(d.natsDir, d.port, d.token); err != nil {
		return err
	}
	d.nc, err = nats.Connect(d.ns.ClientURL(), nats.Token(d.token), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		return err
	}
	js, err := jetstream.New(d.nc)
	if err != nil {
		return err
	}
	qcfg := jobs.DefaultQueueConfig()
	qcfg.AckWait, qcfg.MaxDeliver = d.cfg.AckWait, d.cfg.MaxAttempts*20
	cons, err := jobs.EnsureQueue(ctx, js, qcfg)
	if err != nil {
		return err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	d.sealKey = base64.StdEncoding.EncodeToString(key)
	sealer, err := jobs.NewSealer(key)
	if err != nil {
		return err
	}
	pub := jobs.NewPublisher(js)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d.sender = outbox.Start(pub, d.st, quiet, outbox.Options{})
	srv := api.New(api.Config{AdminToken: "chaos"}, d.st, d.sender, netguard.New([]string{"127.0.0.1"}), sealer, quiet)
	go srv.FollowChanges(ctx)
	d.api = httptest.NewServer(srv.Handler())
	d.demo = httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	d.model = llmtest.Start()
	d.model.Fallback = &agentReply
	rec, err := reconcile.New(reconcile.Config{Store: d.st, Publisher: pub, Logger: quiet,
		Every: 500 * time.Millisecond, Unsent: 2 * time.Second, Stale: 10 * time.Second,
		InStream: func(ctx context.Context) (int, error) { return jobs.InStream(ctx, cons) }})
	if err != nil {
		return err
	}
	go rec.Run(ctx)
	return reconcile.WatchMaxDeliveries(ctx, d.nc, js, d.st, quiet)
}

func (d *drill) close() {
	d.mu.Lock()
	for _, w := range d.workers {
		_ = w.Process.Kill()
		_ = w.Wait()
	}
	d.workers = map[int]*exec.Cmd{}
	d.mu.Unlock()
	for _, s := range []*httptest.Server{d.api, d.demo} {
		if s != nil {
			s.Close()
		}
	}
	if d.sender != nil {
		d.sender.Close()
	}
	if d.model != nil {
		d.model.Close()
	}
	if d.nc != nil {
		d.nc.Close()
	}
	if d.ns != nil {
		d.ns.Shutdown()
	}
	if d.st != nil {
		d.st.Close()
	}
	if d.cluster != nil {
		d.cluster.Remove()
	}
	if d.natsDir != "" {
		_ = os.RemoveAll(d.natsDir)
	}
}

// startWorker starts one more worker process.
func (d *drill) startWorker() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextID++
	id := fmt.Sprintf("chaos-%d", d.nextID)
	cmd := exec.Command(d.cfg.WorkerBin)
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+d.cluster.URL,
		fmt.Sprintf("NATS_URL=nats://127.0.0.1:%d", d.port),
		"WEBPILOT_NATS_TOKEN="+d.token,
		"WEBPILOT_SECRET_KEY="+d.sealKey,
		"WEBPILOT_ALLOW_HOSTS=127.0.0.1",
		"WEBPILOT_ACK_WAIT="+d.cfg.AckWait.String(),
		fmt.Sprintf("WEBPILOT_MAX_ATTEMPTS=%d", d.cfg.MaxAttempts),
		"WEBPILOT_WORKER_ID="+id,
		"WEBPILOT_CONCURRENCY=2",
		// Pictures are not what the drill is about, and cost a quarter of
		// a job's CPU (bench scaling).
		"WEBPILOT_STEP_SCREENSHOTS=false",
		"WEBPILOT_DATA_DIR="+filepath.Join(d.cfg.LogDir, id),
		"PLAYWRIGHT_DRIVER_PATH="+d.cfg.DriverDir,
		"OPENAI_API_KEY=chaos", "OPENAI_BASE_URL="+d.model.BaseURL(), "WEBPILOT_MODEL=gpt-4o-mini",
	)
	logf, err := os.Create(filepath.Join(d.cfg.LogDir, id+".log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	d.workers[d.nextID] = cmd
	return nil
}

// killOne SIGKILLs a random worker and starts a replacement.
func (d *drill) killOne() error {
	d.mu.Lock()
	var ids []int
	for id := range d.workers {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		d.mu.Unlock()
		return d.startWorker()
	}
	id := ids[mrand.IntN(len(ids))]
	w := d.workers[id]
	delete(d.workers, id)
	d.kills++
	d.mu.Unlock()
	_ = w.Process.Signal(syscall.SIGKILL)
	_ = w.Wait()
	return d.startWorker()
}

type tenant struct{ id, key string }

// makeTenants makes the drill's three tenants through the admin API at
// base, 1000 credits each; the first may run one job at a time.
func makeTenants(ctx context.Context, base, admin string) ([]tenant, error) {
	var ts []tenant
	for i, cap := range []int{1, 0, 0} {
		var res struct {
			Tenant struct{ ID string }
			APIKey string `json:"api_key"`
		}
		if err := post(ctx, base, "/v1/admin/tenants", admin, "", map[string]any{"name": fmt.Sprintf("tenant %d", i), "max_running": cap}, &res); err != nil {
			return nil, err
		}
		if err := post(ctx, base, "/v1/admin/tenants/"+res.Tenant.ID+"/credits", admin, "",
			map[string]any{"credits": 1000, "idempotency_key": "initial"}, nil); err != nil {
			return nil, err
		}
		ts = append(ts, tenant{res.Tenant.ID, res.APIKey})
	}
	return ts, nil
}

// scenario is drill job i's submission.
// jobName is a drill job's scenario name as its spec's test is named.
var jobName = regexp.MustCompile(`chaos [0-9]+`)

func (j job) scenario(i int, demoURL string) map[string]any {
	return map[string]any{"kind": "scenario", "scenario": map[string]any{
		"name": fmt.Sprintf("chaos %d", i), "base_url": demoURL + "/list", "steps": j.steps}}
}

// tenantOf spreads jobs: one in five is the capped tenant's.
func tenantOf(i int, ts []tenant) tenant {
	if i%5 != 0 {
		return ts[1+i%2]
	}
	return ts[0]
}

func (d *drill) run(ctx context.Context) (Report, error) {
	ts, err := makeTenants(ctx, d.api.URL, "chaos")
	if err != nil {
		return Report{}, err
	}
	for range d.cfg.Workers {
		if err := d.startWorker(); err != nil {
			return Report{}, err
		}
	}
	rep := Report{Jobs: d.cfg.Jobs}
	submitted := make([]struct {
		id  string
		key string
	}, d.cfg.Jobs)
	for i := range d.cfg.Jobs {
		tn := tenantOf(i, ts)
		var v api.JobView
		retries, err := d.submit(ctx, tn.key, fmt.Sprintf("chaos-%d", i), job{steps, stepsMust}.scenario(i, d.demo.URL), &v)
		if err != nil {
			return rep, fmt.Errorf("submit job %d: %w", i, err)
		}
		rep.SubmitRetries += retries
		submitted[i].id, submitted[i].key = v.ID, tn.key
	}

	// Chaos: kills all along; NATS restarted at a third of the way, the
	// database at two thirds (submissions go on through it).
	chaosCtx, stopChaos := context.WithCancel(ctx)
	chaosDone := make(chan error, 1)
	go func() { chaosDone <- d.chaos(chaosCtx) }()

	open := d.waitOpen(ctx, time.Now().Add(d.cfg.Deadline))
	stopChaos()
	if err := <-chaosDone; err != nil {
		return rep, err
	}
	if open > 0 {
		// Unfinished, not lost: with the kills stopped, every job a worker
		// can still claim ends (the workers resume them); what does not is
		// lost.
		rep.Unfinished = open
		d.log.Info("jobs unfinished at the deadline; waiting without kills", "open", open)
		d.waitOpen(ctx, time.Now().Add(unfinishedGrace))
	}
	d.mu.Lock()
	rep.Kills = d.kills
	d.mu.Unlock()
	// The last hold sweeps and settles happen in the finishing transactions;
	// give in-flight finishes a moment before reading.
	time.Sleep(500 * time.Millisecond)
	return rep, verify(ctx, d.st.Pool(), d.model, d.cfg.CheckSpec, job{steps, stepsMust}, &rep, submitted)
}

// unfinishedGrace bounds the wait, once the kills stopped, for the jobs
// unfinished at the deadline.
const unfinishedGrace = 3 * time.Minute

// waitOpen waits until no job is queued or running, or until deadline,
// and answers how many are.
func (d *drill) waitOpen(ctx context.Context, deadline time.Time) int {
	for {
		var open int
		err := d.st.Pool().QueryRow(ctx, `SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')`).Scan(&open)
		if err == nil && open == 0 {
			return 0
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return -1
			}
			return open
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// finished counts the jobs that reached a final state.
func (d *drill) finished(ctx context.Context) int {
	var n int
	_ = d.st.Pool().QueryRow(ctx, `SELECT count(*) FROM jobs WHERE state NOT IN ('queued', 'running')`).Scan(&n)
	return n
}

// chaos kills workers while the jobs run, paced by their progress: a kill
// comes KillEvery after the last, and only once a job has ended since, so
// that on a machine where a job takes longer than KillEvery the drill
// still exercises resuming rather than starving every job of a worker.
func (d *drill) chaos(ctx context.Context) error {
	tick := time.NewTicker(d.cfg.KillEvery)
	defer tick.Stop()
	done := d.finished(ctx)
	natsAt := time.After(d.cfg.KillEvery * 2)
	pgAt := time.After(d.cfg.KillEvery * 4)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			now := d.finished(ctx)
			if now == done {
				continue // no job ended since the last kill: let them
			}
			done = now
			if err := d.killOne(); err != nil {
				return err
			}
		case <-natsAt:
			d.log.Info("restarting NATS")
			d.ns.Shutdown()
			d.ns.WaitForShutdown()
			ns, err := jobs.StartEmbedded(d.natsDir, d.port, d.token)
			if err != nil {
				return fmt.Errorf("restart NATS: %w", err)
			}
			d.ns = ns
		case <-pgAt:
			d.log.Info("restarting PostgreSQL")
			if err := d.cluster.Stop(); err != nil {
				return err
			}
			time.Sleep(2 * time.Second)
			if err := d.cluster.Start(); err != nil {
				return err
			}
		}
	}
}

// verify counts what a customer would check once every job ended: each
// submitted job succeeded once with its whole spec (checkSpec runs the
// distinct specs), no hold is left, every balance is its ledger's sum and
// not negative, and every call the model endpoint answered was charged
// exactly once.
func verify(ctx context.Context, pool *pgxpool.Pool, model *llmtest.Server, checkSpec func(context.Context, string) error,
	j job, rep *Report, submitted []struct{ id, key string }) error {
	want := map[string]bool{}
	for _, s := range submitted {
		want[s.id] = true
	}
	var total int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM jobs`).Scan(&total); err != nil {
		return err
	}
	rep.Duplicated = total - len(want)
	rows, err := pool.Query(ctx, `SELECT id::text, state, attempt, COALESCE(script, ''), COALESCE(error, '') FROM jobs`)
	if err != nil {
		return err
	}
	defer rows.Close()
	// Every job's spec is the same but for its test's name ("chaos 17"):
	// the runner runs each distinct one once (it took 2 CPU-seconds a job).
	scripts := map[string]string{} // the spec with the name left out -> one as written
	for rows.Next() {
		var id, script, msg string
		var state store.JobState
		var attempt int
		if err := rows.Scan(&id, &state, &attempt, &script, &msg); err != nil {
			return err
		}
		if attempt > 1 {
			rep.ResumedAttempts++
		}
		switch state {
		case store.JobStateSucceeded:
			rep.Succeeded++
			if key := jobName.ReplaceAllString(script, "chaos N"); scripts[key] == "" {
				scripts[key] = script
			}
			complete := true
			for i := range j.steps {
				complete = complete && strings.Contains(script, fmt.Sprintf("// step %d:", i+1))
			}
			for _, m := range j.must {
				complete = complete && strings.Contains(script, m)
			}
			if !complete {
				rep.IncompleteSpecs++
			}
		case store.JobStateQueued, store.JobStateRunning:
			rep.Lost++
		default:
			rep.Failed++
			if len(rep.Errors) < 5 {
				rep.Errors = append(rep.Errors, string(state)+": "+msg)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rep.DistinctSpecs = len(scripts)
	if checkSpec != nil {
		for _, script := range scripts {
			if err := checkSpec(ctx, script); err != nil {
				rep.FailingSpecs++
				if len(rep.Errors) < 5 {
					rep.Errors = append(rep.Errors, "spec fails under @playwright/test: "+err.Error())
				}
			}
		}
	}
	var held int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE(sum(held), 0)::bigint FROM credit_accounts`).Scan(&held); err != nil {
		return err
	}
	rep.HeldLeft = held
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM credit_accounts WHERE balance < 0`).Scan(&rep.NegativeBalances); err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM credit_accounts a WHERE a.balance <>
		(SELECT COALESCE(sum(amount), 0) FROM credit_entries e WHERE e.tenant_id = a.tenant_id)`).Scan(&rep.LedgerMismatches); err != nil {
		return err
	}
	// Every call the endpoint answered has exactly one settled usage row
	// with its ledger entry (a zero-cost call needs none).
	answered := model.Answered()
	rep.AnsweredCalls = len(answered)
	for _, id := range answered {
		parts := strings.Split(id, "/")
		if len(parts) != 3 {
			rep.UnchargedCalls++
			continue
		}
		var settled, entries int
		err := pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM token_usage WHERE job_id = $1 AND attempt = $2::int AND seq = $3::int AND state = 'settled' AND credits > 0),
			(SELECT count(*) FROM credit_entries WHERE idempotency_key = 'usage:' || $1 || ':' || $2 || ':' || $3)`,
			parts[0], parts[1], parts[2]).Scan(&settled, &entries)
		if err != nil {
			return err
		}
		switch {
		case settled == 0 || entries == 0:
			rep.UnchargedCalls++
		case entries > 1:
			rep.DoubleCharged++
		}
	}
	return nil
}

// submit posts a job with an Idempotency-Key, retrying while the service is
// briefly unavailable (the database restart), as a client should.
func (d *drill) submit(ctx context.Context, key, idem string, body any, out any) (int, error) {
	for retries := 0; ; retries++ {
		err := d.post(ctx, "/v1/jobs", key, idem, body, out)
		var unavailable errUnavailable
		if err == nil || !errors.As(err, &unavailable) || retries > 120 {
			return retries, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

type errUnavailable struct{ status int }

func (e errUnavailable) Error() string { return fmt.Sprintf("service unavailable (%d)", e.status) }

func (d *drill) post(ctx context.Context, path, token, idem string, body, out any) error {
	return post(ctx, d.api.URL, path, token, idem, body, out)
}

// post sends body to base+path as token, with an Idempotency-Key when idem
// is set; a refused connection or a 503 is errUnavailable.
func post(ctx context.Context, base, path, token, idem string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return errUnavailable{0}
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable {
		return errUnavailable{resp.StatusCode}
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, rb)
	}
	if out != nil {
		return json.Unmarshal(rb, out)
	}
	return nil
}
