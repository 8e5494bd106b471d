package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/webpilot/webpilot/e2e/chaos"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
)

// chaosBench runs the crash drill at a larger size than the test suite's
// and prints its table and summary line.
func chaosBench(ctx context.Context, jobs int) error {
	dir, err := os.MkdirTemp("", "webpilot-bench-chaos-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "worker")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/worker").CombinedOutput(); err != nil {
		return fmt.Errorf("build worker: %v: %s", err, out)
	}
	rep, err := chaos.Run(ctx, chaos.Config{WorkerBin: bin, DriverDir: os.Getenv("PLAYWRIGHT_DRIVER_PATH"), Jobs: jobs, Workers: 3,
		KillEvery: 4 * time.Second, Deadline: 15 * time.Minute, LogDir: dir})
	if err != nil {
		return err
	}
	fmt.Printf("Crash drill: %d jobs over 3 tenants (one capped at 1 running), 3 worker processes SIGKILLed every 4 s, NATS and PostgreSQL restarted once\n", jobs)
	fmt.Printf("  %-58s %12s\n", "measure", "value")
	for _, r := range []struct {
		name string
		v    any
	}{
		{"jobs succeeded", rep.Succeeded}, {"jobs failed", rep.Failed}, {"jobs lost (never ended)", rep.Lost},
		{"jobs duplicated", rep.Duplicated}, {"succeeded jobs with an incomplete spec", rep.IncompleteSpecs},
		{"workers SIGKILLed", rep.Kills}, {"jobs that needed more than one attempt", rep.ResumedAttempts},
		{"model calls answered by the endpoint", rep.AnsweredCalls}, {"answered calls never charged", rep.UnchargedCalls},
		{"calls charged twice", rep.DoubleCharged}, {"negative balances", rep.NegativeBalances},
		{"balances differing from their ledger", rep.LedgerMismatches}, {"credits still held (micro)", rep.HeldLeft},
		{"wall time", rep.Duration.Round(time.Second)},
	} {
		fmt.Printf("  %-58s %12v\n", r.name, r.v)
	}
	for _, e := range rep.Errors {
		fmt.Println("  failed:", e)
	}
	fmt.Println(rep.Line())
	fmt.Println()
	return nil
}

// clusterBench runs the cluster drill at a larger size than the test
// suite's and prints its table and summary line.
func clusterBench(ctx context.Context, jobs int) error {
	dir, err := os.MkdirTemp("", "webpilot-bench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{}
	for _, name := range []string{"dispatcher", "worker"} {
		bins[name] = filepath.Join(dir, "bin", name)
		if out, err := exec.Command("go", "build", "-o", bins[name], "./cmd/"+name).CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v: %s", name, err, out)
		}
	}
	natsBin, err := natstest.BuildServer(ctx, dir)
	if err != nil {
		return err
	}
	rep, err := chaos.RunCluster(ctx, chaos.ClusterConfig{DispatcherBin: bins["dispatcher"], WorkerBin: bins["worker"], NATSBin: natsBin,
		DriverDir: os.Getenv("PLAYWRIGHT_DRIVER_PATH"), Jobs: jobs, SubmitOver: time.Duration(jobs) * 500 * time.Millisecond,
		Deadline: 15 * time.Minute, LogDir: dir})
	if err != nil {
		return err
	}
	fmt.Printf("Cluster drill: %d jobs over 3 tenants through a proxy to 2 dispatcher processes; 3 nats-server processes (stream at 3 replicas), 3 workers; a dispatcher, a worker mid-job, a NATS server and then the stream's leader SIGKILLed\n", jobs)
	fmt.Printf("  %-58s %12s\n", "measure", "value")
	for _, r := range []struct {
		name string
		v    any
	}{
		{"jobs succeeded", rep.Succeeded}, {"jobs failed", rep.Failed}, {"jobs lost (never ended)", rep.Lost},
		{"jobs duplicated", rep.Duplicated}, {"succeeded jobs with an incomplete spec", rep.IncompleteSpecs},
		{"NATS servers SIGKILLed", rep.NodeKills}, {"stream leader changes", rep.LeaderChanges},
		{"dispatchers SIGKILLed", rep.DispatcherKills}, {"workers SIGKILLed mid-job", rep.WorkerKills},
		{"jobs that needed more than one attempt", rep.ResumedAttempts},
		{"submissions answered 503 with Retry-After", rep.Unavailable}, {"submissions cut by a killed dispatcher (retried)", rep.Cut},
		{"submissions without an answer in 10 s", rep.Hung}, {"longest submission, first try to 202", rep.MaxSubmitStall.Round(time.Millisecond)},
		{"model calls answered by the endpoint", rep.AnsweredCalls}, {"answered calls never charged", rep.UnchargedCalls},
		{"calls charged twice", rep.DoubleCharged}, {"negative balances", rep.NegativeBalances},
		{"balances differing from their ledger", rep.LedgerMismatches}, {"credits still held (micro)", rep.HeldLeft},
		{"wall time", rep.Duration.Round(time.Second)},
	} {
		fmt.Printf("  %-58s %12v\n", r.name, r.v)
	}
	for _, e := range rep.Errors {
		fmt.Println("  failed:", e)
	}
	fmt.Println(rep.Line())
	fmt.Println()
	return nil
}
