package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/mcpserver"
	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/store"
)

// SessionCommandPrice is what one command (or one call without commands)
// of an MCP session costs, in micro-credits.
const SessionCommandPrice = 1000

// sessionModel names a session's charges in the ledger.
const sessionModel = "browser-session"

// runSession holds a browser for an MCP client: it answers the calls the
// dispatcher sends to the job's subject, charging each against the job's
// hold and recording each batch in the job's history, until the client
// closes it, it idles out or it is cancelled; the job's script is the
// session's spec.
func (w *Worker) runSession(ctx context.Context, claim store.Claim, cancelled func() bool, log *slog.Logger) outcome {
	if w.cfg.Sessions == nil {
		return failed("this worker takes no MCP sessions (it has no connection for their calls)")
	}
	if claim.Attempt > 1 {
		// The browser the client was driving went with the worker that
		// held it: a new one would silently be another page.
		return failed("the session's browser was lost with the worker that held it; open a new session")
	}
	req, secrets, err := openInput[jobs.SessionRequest](w, claim)
	if err != nil {
		return failed(err.Error())
	}
	log = orchestrator.RedactLogger(log, secrets)
	tun := w.proxy.Open()
	defer tun.Close()
	opts, err := deviceOptions(req.Options.Device)
	if err != nil {
		return failed(err.Error())
	}
	sess, closeSession, err := w.openSession(ctx, tun, log, opts)
	if err != nil {
		return failed(err.Error())
	}
	defer closeSession()
	agent := &orchestrator.Agent{Page: sess, Recorder: &recorder{store: w.store, jobID: claim.JobID, attempt: claim.Attempt,
		prices: w.cfg.Prices, sealer: w.sealer, retry: w.retry, metrics: w.cfg.Metrics}, Limits: w.cfg.Limits, Log: log}
	s := agent.NewSession(orchestrator.SessionInput{Name: "mcp session " + claim.JobID, AllowedOrigins: req.Options.AllowedOrigins,
		Secrets: secrets, Device: req.Options.Device})

	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-serveCtx.Done():
				return
			case <-t.C:
				if cancelled() {
					stop()
					return
				}
			}
		}
	}()
	idle := time.Duration(req.IdleSeconds) * time.Second
	if idle == 0 {
		idle = jobs.DefaultSessionIdle * time.Second
	}
	seq := 0
	charge := func(ctx context.Context, c mcpserver.SessionCall) error {
		seq++
		price := int64(SessionCommandPrice * max(1, len(c.Commands)))
		r := store.Reservation{JobID: claim.JobID, Attempt: claim.Attempt, Seq: seq, Model: sessionModel, Max: price}
		if err := w.store.ReserveCall(ctx, r); err != nil {
			if errors.Is(err, store.ErrHoldExceeded) {
				return fmt.Errorf("the session's credits are spent (each command costs %g credits): open a new session with a larger budget", float64(SessionCommandPrice)/store.MicroCredits)
			}
			return fmt.Errorf("the call could not be charged: %w", err)
		}
		_, err := w.store.SettleCall(ctx, store.Usage{JobID: claim.JobID, Attempt: claim.Attempt, Seq: seq, Model: sessionModel, Credits: price})
		return err
	}
	log.Info("session open", "idle", idle)
	err = mcpserver.ServeSession(serveCtx, w.cfg.Sessions, jobs.SessionSubject(claim.JobID), s, mcpserver.ServeOptions{Idle: idle, Charge: charge, Log: log})
	spec, _ := s.Spec()
	res := orchestrator.Result{Status: orchestrator.StatusSucceeded, Steps: s.Steps(), Script: spec}
	switch {
	case cancelled():
		res.Status, res.Error = orchestrator.StatusCancelled, "the session was cancelled"
	case err != nil:
		res.Status, res.Error = orchestrator.StatusFailed, "the session ended: "+err.Error()
	}
	b, eerr := encodeResult(res, claim, nil)
	if eerr != nil {
		return failed("the result cannot be encoded: " + eerr.Error())
	}
	return outcome{Finish: store.Finish{State: jobState(res.Status), Result: b, Script: spec, Error: res.Error}}
}
