package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/webpilot/webpilot/e2e/chaos"
	"github.com/webpilot/webpilot/internal/jobs/natstest"
)

// measure is one row of a drill's table.
type measure struct {
	name string
	v    any
}

func printMeasures(title string, rows []measure, rep chaos.Report) {
	fmt.Println(title)
	fmt.Printf("  %-58s %12s\n", "measure", "value")
	for _, r := range rows {
		fmt.Printf("  %-58s %12v\n", r.name, r.v)
	}
	for _, e := range rep.Errors {
		fmt.Println("  failed:", e)
	}
}

// outcomes are the rows every drill reports: what became of the jobs and
// of the credits.
func outcomes(rep chaos.Report) (jobs, credits []measure) {
	return []measure{{"jobs succeeded", rep.Succeeded}, {"jobs failed", rep.Failed}, {"jobs lost (never ended)", rep.Lost}, {"jobs unfinished at the deadline (then waited for)", rep.Unfinished},
			{"jobs duplicated", rep.Duplicated}, {"succeeded jobs with an incomplete spec", rep.IncompleteSpecs}},
		[]measure{{"model calls answered by the endpoint", rep.AnsweredCalls}, {"answered calls never charged", rep.UnchargedCalls},
			{"calls charged twice", rep.DoubleCharged}, {"negative balances", rep.NegativeBalances},
			{"balances differing from their ledger", rep.LedgerMismatches}, {"credits still held (micro)", rep.HeldLeft},
			{"wall time", rep.Duration.Round(time.Second)}}
}

// chaosBench runs the crash drill at a larger size than the test suite's
// and prints its table and summary line.
func chaosBench(ctx context.Context, jobs int) error {
	dir, err := os.MkdirTemp("", "webpilot-bench-chaos-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := chaos.Build(ctx, dir, "worker", "")
	if err != nil {
		return err
	}
	rep, err := chaos.Run(ctx, chaos.Config{WorkerBin: bin, DriverDir: os.Getenv("PLAYWRIGHT_DRIVER_PATH"), Jobs: jobs, Workers: 3,
		KillEvery: 4 * time.Second, Deadline: 15 * time.Minute, LogDir: dir})
	if err != nil {
		return err
	}
	jobRows, creditRows := outcomes(rep)
	rows := append(jobRows, measure{"workers SIGKILLed", rep.Kills}, measure{"jobs that needed more than one attempt", rep.ResumedAttempts})
	printMeasures(fmt.Sprintf("Crash drill: %d jobs over 3 tenants (one capped at 1 running), 3 worker processes SIGKILLed every 4 s, NATS and PostgreSQL restarted once", jobs),
		append(rows, creditRows...), rep)
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
		if bins[name], err = chaos.Build(ctx, dir, name, ""); err != nil {
			return err
		}
	}
	natsBin, err := natstest.BuildServer(ctx, filepath.Join(dir, "bin"))
	if err != nil {
		return err
	}
	rep, err := chaos.RunCluster(ctx, chaos.ClusterConfig{DispatcherBin: bins["dispatcher"], WorkerBin: bins["worker"], NATSBin: natsBin,
		DriverDir: os.Getenv("PLAYWRIGHT_DRIVER_PATH"), Jobs: jobs, SubmitOver: time.Duration(jobs) * 500 * time.Millisecond,
		Deadline: 15 * time.Minute, LogDir: dir})
	if err != nil {
		return err
	}
	jobRows, creditRows := outcomes(rep.Report)
	rows := append(jobRows,
		measure{"NATS servers SIGKILLed", rep.NodeKills}, measure{"stream leader changes", rep.LeaderChanges},
		measure{"dispatchers SIGKILLed", rep.DispatcherKills}, measure{"workers SIGKILLed mid-job", rep.WorkerKills},
		measure{"jobs that needed more than one attempt", rep.ResumedAttempts},
		measure{"submissions answered 503 with Retry-After", rep.Unavailable}, measure{"submissions cut by a killed dispatcher (retried)", rep.Cut},
		measure{"submissions without an answer in 10 s", rep.Hung}, measure{"longest submission, first try to 202", rep.MaxSubmitStall.Round(time.Millisecond)})
	printMeasures(fmt.Sprintf("Cluster drill: %d jobs over 3 tenants through a proxy to 2 dispatcher processes; 3 nats-server processes (stream at 3 replicas), 3 workers; a dispatcher, a worker mid-job, a NATS server and then the stream's leader SIGKILLed", jobs),
		append(rows, creditRows...), rep.Report)
	fmt.Println(rep.Line())
	fmt.Println()
	return nil
}
