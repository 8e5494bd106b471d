// Package drills holds the long drills of the whole stack with real
// processes (crashes, outages, a clustered topology), run as their own
// package so that they run beside the rest of the tests.
package drills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/webpilot/webpilot/e2e/chaos"
	"github.com/webpilot/webpilot/internal/browser/browsertest"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
	"github.com/webpilot/webpilot/internal/testslot"
)

// buildCmd compiles one of the project's commands into a checkout laid
// out as make leaves one, so it finds the driver and the runner as the
// README starts it.
func buildCmd(t *testing.T, name string) string {
	t.Helper()
	bin, err := chaos.Build(context.Background(), t.TempDir(), name, filepath.Dir(browsertest.DriverDir()))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func checkSpec(ctx context.Context, script string) error {
	if out, err := browsertest.RunSpec(ctx, script, nil); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

func lastLog(t *testing.T, pattern string) {
	t.Helper()
	if matches, _ := filepath.Glob(pattern); len(matches) > 0 {
		b, _ := os.ReadFile(matches[len(matches)-1])
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		t.Logf("%s:\n%s", matches[len(matches)-1], b)
	}
}

// TestChaosDrill runs 20 jobs over three tenants (one capped at a single
// running job) on worker processes SIGKILLed every 4 s, with NATS and
// PostgreSQL each restarted once, and requires every job to succeed exactly
// once with its whole spec, no hold left, every balance equal to its ledger
// and not negative, and every model call the endpoint answered charged
// exactly once.
func TestChaosDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("a few minutes of real processes")
	}
	t.Parallel()
	testslot.Take(t)
	logs := t.TempDir()
	// The deadline bounds "eventually": with a worker killed every 4 s on a
	// 2-core machine, two of four runs reached a 5-minute bound with 2 to 7
	// jobs still resuming (none lost for good); 7 minutes leaves room, and a
	// stranded job still fails the drill. The specs, the same but for
	// their test's name, go through the runner once (make bench runs 120
	// jobs; 20 here are enough for a kill every few jobs: 30 gave 20 kills
	// and 18 resumed jobs in 5m23s on a slow machine, and CI time is
	// shared).
	rep, err := chaos.Run(context.Background(), chaos.Config{WorkerBin: buildCmd(t, "worker"), DriverDir: browsertest.DriverDir(),
		Jobs: 20, Workers: 2, KillEvery: 4 * time.Second, Deadline: 7 * time.Minute, LogDir: logs, CheckSpec: checkSpec})
	t.Logf("%s (kills %d, resumed %d, answered calls %d, submit retries %d, distinct specs run %d, %s)", rep.Line(), rep.Kills, rep.ResumedAttempts,
		rep.AnsweredCalls, rep.SubmitRetries, rep.DistinctSpecs, rep.Duration.Round(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		lastLog(t, filepath.Join(logs, "*.log"))
		t.Fatalf("drill found faults: %+v", rep)
	}
	if rep.Kills < 5 || rep.ResumedAttempts == 0 {
		t.Fatalf("the drill did not interrupt enough: %d kills, %d resumed jobs", rep.Kills, rep.ResumedAttempts)
	}
}

// TestClusterDrill runs the clustered topology with real processes: three
// nats-server processes in a JetStream cluster with the job stream at three
// replicas, two dispatchers behind a reverse proxy, three workers and
// PostgreSQL. While 40 jobs of three tenants are submitted through the
// proxy, a dispatcher is SIGKILLed, a worker holding a job is SIGKILLed, a
// NATS server is SIGKILLed and restarted, and then the stream's leader is
// (the last ten submissions go in while its successor is elected).
// Every job must succeed exactly once with its whole spec, no hold is left,
// every ledger is exact, no balance is negative, every answered model call
// is charged once, and every submission had an answer (202, or 503 with
// Retry-After; a request a killed dispatcher cut is retried under its
// Idempotency-Key), never a hang.
func TestClusterDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("a few minutes of real processes")
	}
	testslot.Long(t)
	t.Parallel()
	testslot.Take(t)
	ctx := context.Background()
	logs := t.TempDir()
	natsBin, err := natstest.BuildServer(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := chaos.RunCluster(ctx, chaos.ClusterConfig{
		DispatcherBin: buildCmd(t, "dispatcher"), WorkerBin: buildCmd(t, "worker"), NATSBin: natsBin,
		DriverDir: browsertest.DriverDir(), Jobs: 40, SubmitOver: 30 * time.Second, Deadline: 5 * time.Minute,
		LogDir: logs, CheckSpec: checkSpec})
	t.Logf("%s (dispatcher kills %d, worker kills %d, resumed %d, 503s %d, cut %d, answered calls %d, %s)", rep.Line(),
		rep.DispatcherKills, rep.WorkerKills, rep.ResumedAttempts, rep.Unavailable, rep.Cut, rep.AnsweredCalls, rep.Duration.Round(time.Second))
	if err != nil {
		lastLog(t, filepath.Join(logs, "worker-*.log"))
		lastLog(t, filepath.Join(logs, "dispatcher-*.log"))
		t.Fatal(err)
	}
	if !rep.OK() {
		lastLog(t, filepath.Join(logs, "worker-*.log"))
		lastLog(t, filepath.Join(logs, "dispatcher-*.log"))
		t.Fatalf("drill found faults: %+v", rep)
	}
	if rep.NodeKills < 2 || rep.LeaderChanges < 1 || rep.DispatcherKills < 1 || rep.WorkerKills < 1 {
		t.Fatalf("the drill did not do what it says: %d NATS kills, %d leader changes, %d dispatcher kills, %d worker kills",
			rep.NodeKills, rep.LeaderChanges, rep.DispatcherKills, rep.WorkerKills)
	}
}
