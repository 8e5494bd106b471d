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
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/internal/demoapp"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
	"github.com/webpilot/webpilot/internal/llm/llmtest"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/store/storetest"
)

// ClusterConfig sizes a drill of the clustered topology: a JetStream
// cluster of nats-server processes with the job stream at three
// replicas, dispatcher processes behind a reverse proxy, worker processes
// and PostgreSQL.
type ClusterConfig struct {
	DispatcherBin, WorkerBin string // built cmd/dispatcher and cmd/worker
	NATSBin                  string // nats-server (natstest.BuildServer)
	DriverDir                string // PLAYWRIGHT_DRIVER_PATH for the workers
	Jobs                     int    // over three tenants; at least 60 in the test
	NATSNodes                int    // default 3
	Dispatchers              int    // default 2
	Workers                  int    // default 3 (2 jobs each)
	// SubmitOver spreads the submissions so they flow through every
	// fault; default 30 s.
	SubmitOver time.Duration
	Deadline   time.Duration // for all jobs to end
	LogDir     string        // processes' logs
	Log        *slog.Logger
	CheckSpec  func(ctx context.Context, script string) error
}

// ClusterReport is what a cluster drill found.
type ClusterReport struct {
	Report
	NodeKills       int // NATS servers SIGKILLed
	LeaderChanges   int // the job stream's leader moved (seen by polling)
	DispatcherKills int
	WorkerKills     int
	// MaxSubmitStall is the longest a submission waited from its first
	// try to its 202, retries included; the last few are sent while the
	// stream elects a new leader.
	MaxSubmitStall time.Duration
	// Unavailable counts 503 answers (each had Retry-After), Cut the
	// requests a killed dispatcher left unanswered (retried under the same
	// Idempotency-Key), Hung those that got no answer in 10 s and
	// BadAnswers any other status.
	Unavailable, Cut, Hung, BadAnswers int
}

// Line is the bench summary line for the cluster drill.
func (r ClusterReport) Line() string {
	return fmt.Sprintf("bench cluster: jobs=%d succeeded=%d lost=%d duplicated=%d negative_balances=%d uncharged_calls=%d node_kills=%d leader_changes=%d max_submit_stall_ms=%d",
		r.Jobs, r.Succeeded, r.Lost, r.Duplicated, r.NegativeBalances, r.UnchargedCalls, r.NodeKills, r.LeaderChanges, r.MaxSubmitStall.Milliseconds())
}

// OK says whether the drill found nothing wrong.
func (r ClusterReport) OK() bool {
	return r.Report.OK() && r.Hung == 0 && r.BadAnswers == 0
}

// clusterJob is every cluster drill job: a typed value, an agent step (one
// model call per tenant; the step cache serves the rest) and a check. The
// faults are in the topology, so the jobs are kept short.
var clusterJob = job{steps: []any{
	`Fill "New item" with "Oat milk"`,
	"Add the typed item to the list",
	`Verify "2 items" is visible`,
}, must: []string{"Oat milk", "2 items"}}

type clusterDrill struct {
	cfg     ClusterConfig
	log     *slog.Logger
	pg      *storetest.Cluster
	st      *store.Store
	nats    *natstest.Cluster
	nc      *nats.Conn
	js      jetstream.JetStream
	demo    *httptest.Server
	model   *llmtest.Server
	proxy   *httptest.Server
	sealKey string
	admin   string

	dispatchers  []*proc
	leaderKilled chan struct{} // closed when the stream's leader is SIGKILLed
	mu           sync.Mutex
	workers      []*proc
	nextWorker   int
}

// proc is one dispatcher or worker process.
type proc struct {
	name   string
	addr   string // a dispatcher's listen address
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	env    []string
	bin    string
	dir    string
	log    string
}

// RunCluster runs a cluster drill: while jobs are submitted through the
// proxy, a dispatcher is SIGKILLed, a worker holding a job is SIGKILLed, a
// NATS server is SIGKILLed and restarted, and then the stream's leader is.
// Afterwards every invariant of the crash drill must hold and every
// submission must have had an answer.
func RunCluster(ctx context.Context, cfg ClusterConfig) (ClusterReport, error) {
	cfg.NATSNodes = max(cfg.NATSNodes, 3)
	cfg.Dispatchers = max(cfg.Dispatchers, 2)
	cfg.Workers = max(cfg.Workers, 3)
	if cfg.SubmitOver == 0 {
		cfg.SubmitOver = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.LogDir == "" {
		cfg.LogDir = os.TempDir()
	}
	d := &clusterDrill{cfg: cfg, log: cfg.Log}
	defer d.close()
	start := time.Now()
	if err := d.setUp(ctx); err != nil {
		return ClusterReport{}, err
	}
	rep, err := d.run(ctx)
	rep.Duration = time.Since(start)
	return rep, err
}

func (d *clusterDrill) setUp(ctx context.Context) error {
	var err error
	if d.pg, d.st, err = startStore(ctx); err != nil {
		return err
	}
	natsDir := filepath.Join(d.cfg.LogDir, "nats")
	if d.nats, err = natstest.StartCluster(ctx, d.cfg.NATSBin, natsDir, d.cfg.NATSNodes, jobs.NewToken()); err != nil {
		return err
	}
	if d.nc, err = d.nats.Connect("cluster-drill"); err != nil {
		return err
	}
	if d.js, err = jetstream.New(d.nc); err != nil {
		return err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	d.sealKey, d.admin = base64.StdEncoding.EncodeToString(key), jobs.NewToken()
	d.demo = httptest.NewServer(demoapp.Handler(demoapp.Options{}))
	d.model = llmtest.Start()
	d.model.Fallback = &agentReply

	for i := range d.cfg.Dispatchers {
		port, err := storetest.FreePort()
		if err != nil {
			return err
		}
		p := &proc{name: fmt.Sprintf("dispatcher-%d", i+1), addr: fmt.Sprintf("127.0.0.1:%d", port), bin: d.cfg.DispatcherBin}
		p.env = append(d.common(p.name), "WEBPILOT_ADDR="+p.addr, "WEBPILOT_ADMIN_TOKEN="+d.admin)
		if err := d.start(p); err != nil {
			return err
		}
		d.dispatchers = append(d.dispatchers, p)
	}
	for _, p := range d.dispatchers {
		if err := waitReady(ctx, p); err != nil {
			return err
		}
	}
	d.proxy = httptest.NewServer(d.reverseProxy())
	for range d.cfg.Workers {
		if err := d.startWorker(); err != nil {
			return err
		}
	}
	return nil
}

// common is what every process of the topology is given, as compose
// gives it.
func (d *clusterDrill) common(name string) []string {
	return append(os.Environ(),
		"DATABASE_URL="+d.pg.URL,
		"NATS_URL="+d.nats.URLs(),
		"WEBPILOT_NATS_TOKEN="+d.nats.Token,
		"WEBPILOT_STREAM_REPLICAS=3",
		"WEBPILOT_STREAM_CLUSTER="+natstest.ClusterName,
		"WEBPILOT_SECRET_KEY="+d.sealKey,
		"WEBPILOT_ALLOW_HOSTS=127.0.0.1",
		"WEBPILOT_ACK_WAIT=3s",
		"WEBPILOT_MAX_ATTEMPTS=10",
		"WEBPILOT_LOG_FORMAT=text",
		"WEBPILOT_DATA_DIR="+filepath.Join(d.cfg.LogDir, name),
	)
}

func (d *clusterDrill) start(p *proc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = filepath.Join(d.cfg.LogDir, p.name+".log")
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if p.dir == "" {
		if p.dir, err = os.MkdirTemp(d.cfg.LogDir, p.name+"-cwd-"); err != nil {
			return err
		}
	}
	cmd := exec.Command(p.bin)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.dir, p.env, logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.exited = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); logf.Close(); close(done) }(p.exited)
	return nil
}

// kill SIGKILLs p.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
		p.cmd = nil
	}
}

func waitReady(ctx context.Context, p *proc) error {
	for deadline := time.Now().Add(60 * time.Second); ; {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b, _ := os.ReadFile(p.log)
			return fmt.Errorf("%s not ready in 60 s:\n%s", p.name, tail(b))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// reverseProxy spreads requests over the dispatchers in turn, as a load
// balancer does, and passes a request to the next one when a dispatcher
// refuses the connection (nothing was sent, so any request may go on). A
// request cut after it was sent is answered 502: the client retries it
// under its Idempotency-Key.
func (d *clusterDrill) reverseProxy() http.Handler {
	var next atomic.Uint64
	dialer := &net.Dialer{Timeout: time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			n := len(d.dispatchers)
			first := int(next.Add(1))
			var err error
			for i := range n {
				var c net.Conn
				if c, err = dialer.DialContext(ctx, network, d.dispatchers[(first+i)%n].addr); err == nil {
					return c, nil
				}
			}
			return nil, err
		},
		DisableKeepAlives: true, // each request picks its dispatcher
	}
	target, _ := url.Parse("http://dispatchers")
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	return rp
}

func (d *clusterDrill) startWorker() error {
	d.mu.Lock()
	d.nextWorker++
	name := fmt.Sprintf("worker-%d", d.nextWorker)
	d.mu.Unlock()
	p := &proc{name: name, bin: d.cfg.WorkerBin}
	p.env = append(d.common(name),
		"WEBPILOT_WORKER_ID="+name,
		"WEBPILOT_CONCURRENCY=2",
		"WEBPILOT_STEP_SCREENSHOTS=false",
		"PLAYWRIGHT_DRIVER_PATH="+d.cfg.DriverDir,
		"OPENAI_API_KEY=cluster", "OPENAI_BASE_URL="+d.model.BaseURL(), "WEBPILOT_MODEL=gpt-4o-mini")
	if err := d.start(p); err != nil {
		return err
	}
	d.mu.Lock()
	d.workers = append(d.workers, p)
	d.mu.Unlock()
	return nil
}

func (d *clusterDrill) close() {
	d.mu.Lock()
	procs := append(append([]*proc{}, d.workers...), d.dispatchers...)
	d.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	for _, s := range []*httptest.Server{d.proxy, d.demo} {
		if s != nil {
			s.Close()
		}
	}
	if d.model != nil {
		d.model.Close()
	}
	if d.nc != nil {
		d.nc.Close()
	}
	if d.nats != nil {
		d.nats.Stop()
	}
	if d.st != nil {
		d.st.Close()
	}
	if d.pg != nil {
		d.pg.Remove()
	}
}

// submission is one job's way in.
type submission struct {
	id, key string
	stall   time.Duration
}

func (d *clusterDrill) run(ctx context.Context) (ClusterReport, error) {
	ts, err := makeTenants(ctx, d.proxy.URL, d.admin)
	if err != nil {
		return ClusterReport{}, err
	}
	rep := ClusterReport{Report: Report{Jobs: d.cfg.Jobs}}
	var counts struct {
		sync.Mutex
		unavailable, cut, hung, bad int
	}
	leaders := d.watchLeader(ctx)

	// Submissions flow at an even pace the whole time the faults happen;
	// the last few wait for the stream's leader to be killed and go in
	// while its successor is elected.
	submitted := make([]submission, d.cfg.Jobs)
	subErr := make(chan error, 1)
	d.leaderKilled = make(chan struct{})
	held := min(10, d.cfg.Jobs/4)
	go func() {
		pace := d.cfg.SubmitOver / time.Duration(d.cfg.Jobs-held)
		for i := range d.cfg.Jobs {
			if i == d.cfg.Jobs-held {
				select {
				case <-d.leaderKilled:
				case <-time.After(3 * time.Minute):
					subErr <- errors.New("the stream's leader was not killed within 3 minutes")
					return
				}
				pace = 0
			}
			tn := tenantOf(i, ts)
			began := time.Now()
			for attempt := 0; ; attempt++ {
				id, status, retryAfter, err := d.submitOnce(ctx, tn.key, fmt.Sprintf("cluster-%d", i), clusterJob.scenario(i, d.demo.URL))
				counts.Lock()
				switch {
				case err == nil && status == http.StatusAccepted:
				case errors.Is(err, errHung):
					counts.hung++
				case err != nil || status == http.StatusBadGateway:
					counts.cut++
				case status == http.StatusServiceUnavailable && retryAfter != "":
					counts.unavailable++
				default:
					counts.bad++
				}
				counts.Unlock()
				if err == nil && status == http.StatusAccepted {
					submitted[i] = submission{id: id, key: tn.key, stall: time.Since(began)}
					break
				}
				if attempt > 100 || ctx.Err() != nil {
					subErr <- fmt.Errorf("submission %d got no 202 in %d tries (last: %d %v)", i, attempt+1, status, err)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
			time.Sleep(pace)
		}
		subErr <- nil
	}()

	if err := d.faults(ctx, &rep); err != nil {
		return rep, err
	}
	if err := <-subErr; err != nil {
		return rep, err
	}
	deadline := time.Now().Add(d.cfg.Deadline)
	for {
		var open int
		err := d.st.Pool().QueryRow(ctx, `SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')`).Scan(&open)
		if err == nil && open == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	rep.LeaderChanges = leaders()
	rep.Unavailable, rep.Cut, rep.Hung, rep.BadAnswers = counts.unavailable, counts.cut, counts.hung, counts.bad
	ids := make([]struct{ id, key string }, len(submitted))
	for i, s := range submitted {
		ids[i].id, ids[i].key = s.id, s.key
		rep.MaxSubmitStall = max(rep.MaxSubmitStall, s.stall)
	}
	time.Sleep(500 * time.Millisecond) // the last finishing transactions
	return rep, verify(ctx, d.st.Pool(), d.model, d.cfg.CheckSpec, clusterJob, &rep.Report, ids)
}

// faults are the drill's kills, in order, each while submissions flow:
// a dispatcher, a worker holding a job, a NATS server (restarted once the
// stream has a leader again), then the stream's leader (restarted the same
// way); each restarted server must catch up.
func (d *clusterDrill) faults(ctx context.Context, rep *ClusterReport) error {
	sleep := func(t time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(t):
		}
	}
	sleep(3 * time.Second)
	d.log.Info("killing a dispatcher")
	d.dispatchers[0].kill()
	rep.DispatcherKills++
	sleep(3 * time.Second)
	if err := d.start(d.dispatchers[0]); err != nil {
		return err
	}

	// A worker holding a running job.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); sleep(100 * time.Millisecond) {
		var holder string
		err := d.st.Pool().QueryRow(ctx, `SELECT worker_id FROM jobs WHERE state = 'running' AND worker_id IS NOT NULL LIMIT 1`).Scan(&holder)
		if err != nil {
			continue
		}
		d.mu.Lock()
		var victim *proc
		for _, w := range d.workers {
			if w.name == holder {
				victim = w
			}
		}
		d.mu.Unlock()
		if victim == nil {
			continue
		}
		d.log.Info("killing a worker mid-job", "worker", holder)
		victim.kill()
		rep.WorkerKills++
		if err := d.startWorker(); err != nil {
			return err
		}
		break
	}
	if rep.WorkerKills == 0 {
		return errors.New("no worker held a running job within 20 s")
	}

	// A NATS server that does not lead the stream, then the one that does.
	leader, err := natstest.StreamLeader(ctx, d.js)
	if err != nil {
		return err
	}
	other := (d.nats.Index(leader) + 1) % d.cfg.NATSNodes
	for _, victim := range []string{d.nats.Names()[other], ""} {
		sleep(2 * time.Second)
		if victim == "" {
			if victim, err = d.waitLeader(ctx); err != nil {
				return err
			}
		}
		i := d.nats.Index(victim)
		d.log.Info("killing a NATS server", "server", victim)
		if err := d.nats.Kill(i); err != nil {
			return err
		}
		rep.NodeKills++
		if rep.NodeKills == 2 {
			close(d.leaderKilled)
		}
		if _, err := d.waitLeader(ctx); err != nil {
			return err
		}
		sleep(3 * time.Second)
		if err := d.nats.Start(i); err != nil {
			return err
		}
		for deadline := time.Now().Add(60 * time.Second); !natstest.StreamCurrent(ctx, d.js, d.cfg.NATSNodes); sleep(250 * time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("NATS server %s did not catch up in 60 s:\n%s", victim, tail([]byte(d.nats.Log(i))))
			}
		}
	}
	return nil
}

// waitLeader waits up to 30 s for the stream to have a leader.
func (d *clusterDrill) waitLeader(ctx context.Context) (string, error) {
	for deadline := time.Now().Add(30 * time.Second); ; {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		leader, err := natstest.StreamLeader(sctx, d.js)
		cancel()
		if err == nil {
			return leader, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the job stream had no leader for 30 s: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// watchLeader polls the stream's leader and, when asked, says how many
// times it changed.
func (d *clusterDrill) watchLeader(ctx context.Context) func() int {
	var changes atomic.Int64
	stop := make(chan struct{})
	go func() {
		last := ""
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			leader, err := natstest.StreamLeader(sctx, d.js)
			cancel()
			if err != nil || leader == last {
				continue
			}
			if last != "" {
				changes.Add(1)
			}
			last = leader
		}
	}()
	return func() int { close(stop); return int(changes.Load()) }
}

var errHung = errors.New("no answer in 10 s")

// submitOnce posts one submission through the proxy and says what came
// back.
func (d *clusterDrill) submitOnce(ctx context.Context, key, idem string, body any) (id string, status int, retryAfter string, err error) {
	b, _ := json.Marshal(body)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, d.proxy.URL+"/v1/jobs", bytes.NewReader(b))
	if err != nil {
		return "", 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idem)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if rctx.Err() != nil && ctx.Err() == nil {
			return "", 0, "", errHung
		}
		return "", 0, "", err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK {
		var v api.JobView
		if err := json.Unmarshal(rb, &v); err != nil {
			return "", resp.StatusCode, "", err
		}
		return v.ID, http.StatusAccepted, "", nil
	}
	return "", resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}
