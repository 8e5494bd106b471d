package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/orchestrator"
	"github.com/webpilot/webpilot/internal/scenario"
	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// writeRunSeconds bounds the run that verifies a written test: one test,
// one file.
const writeRunSeconds = 120

// writeIntoProject writes a succeeded scenario's steps as a test of the
// project it names, runs the file with the runner in the sandbox (through
// the job's egress, against the scenario's origin) and, when it passes,
// proposes the project's version with it. A hold that cannot cover the
// run, or a test the runner fails, proposes nothing and says why; the
// scenario's own result stands either way. ok is false when the job must
// be handed back (the store failed).
func (w *Worker) writeIntoProject(ctx context.Context, claim store.Claim, sc scenario.Scenario, res orchestrator.Result,
	secrets map[string]string, log *slog.Logger) (*suite.IntoProject, outcome, bool) {
	into := &suite.IntoProject{Project: sc.Project}
	v, err := w.store.ProjectVersion(ctx, claim.TenantID, sc.Project, "")
	if err != nil {
		if ctx.Err() != nil || !errors.Is(err, store.ErrNotFound) {
			return nil, handedBack(err), false
		}
		into.Error = "the project no longer exists"
		return into, outcome{}, true
	}
	into.Parent = v.Digest
	p, out, ok := w.loadProject(ctx, claim.TenantID, v.Digest)
	if !ok {
		if out.Finish.State == "" {
			return nil, out, false
		}
		into.Error = out.Finish.Error
		return into, outcome{}, true
	}
	wo := suite.WriteOptions{SecretNames: slices.Sorted(maps.Keys(secrets))}
	var listed []suite.TestOutcome
	if json.Unmarshal(v.Tests, &listed) == nil && len(listed) > 0 {
		wo.TestFiles = []string{}
		for _, t := range listed {
			if !slices.Contains(wo.TestFiles, t.File) {
				wo.TestFiles = append(wo.TestFiles, t.File)
			}
		}
	}
	wt, err := suite.WriteTest(p, sc, res.Manifest, wo)
	if err != nil {
		into.Error = "the test cannot be written into the project: " + err.Error()
		return into, outcome{}, true
	}
	into.File, into.Source, into.Uses = wt.File, wt.Source, wt.Uses
	files := map[string][]byte{wt.File: []byte(wt.Source)}
	for _, f := range p.Files {
		files[f.Path] = f.Content
	}
	np, err := suite.NewProject(files)
	if err != nil {
		into.Error = "the project with the test is not a project: " + err.Error()
		return into, outcome{}, true
	}
	var rep suite.RunReport
	run, err := w.metered(ctx, claim, writeRunSeconds, func() (err error) {
		rep, err = w.runProject(ctx, np, suite.RunOptions{Files: []string{wt.File}, BaseURL: sc.Origin(), Env: secrets,
			Wall: writeRunSeconds * time.Second, Trace: true})
		return err
	})
	into.BrowserSeconds, into.CreditsMicro = run.took.Seconds(), run.charged
	if end, ok := endOf(err); ok {
		if end.Finish.State == store.JobStateBudgetExhausted {
			// The scenario's own job stands: only the written test
			// goes unverified.
			into.Error = "not verified: " + end.Finish.Error
			return into, outcome{}, true
		}
		return nil, end, false
	}
	if err != nil {
		into.Error = "the runner failed: " + err.Error()
		return into, outcome{}, true
	}
	into.Verdict = fileVerdict(rep)
	if into.Verdict != suite.StatusPassed {
		why := strings.Join(rep.Errors, "; ")
		for _, t := range rep.Tests {
			if t.Status != suite.StatusPassed && t.Error != "" {
				why = firstLine(t.Error)
				break
			}
		}
		into.Error = "the written test " + string(into.Verdict) + " under the runner: " + why
		return into, outcome{}, true
	}
	archive, err := np.Archive()
	if err != nil {
		into.Error = "the project with the test cannot be packed: " + err.Error()
		return into, outcome{}, true
	}
	nv := store.ProjectVersion{Project: sc.Project, Digest: np.Digest(), Files: len(np.Files), Bytes: np.Size(), Parent: v.Digest}
	if _, err := w.store.ProposeProjectVersion(ctx, claim.TenantID, nv, archive); err != nil {
		return nil, handedBack(err), false
	}
	into.Proposed = nv.Digest
	if err := w.keepWrittenPrints(ctx, claim.TenantID, v.Digest, nv.Digest, rep, secrets); err != nil {
		return nil, handedBack(err), false
	}
	log.Info("wrote the scenario into the project", "project", sc.Project, "file", wt.File, "uses", len(wt.Uses), "proposed", nv.Digest)
	return into, outcome{}, true
}

// keepWrittenPrints gives the proposed version what its tests acted on:
// the parent's, and the written test's from its passing run, so that a
// repair of the written test after the app drifts starts from the
// elements it was written for, as one of a test seen passing on webpilot.
func (w *Worker) keepWrittenPrints(ctx context.Context, tenantID, parent, version string, rep suite.RunReport, secrets map[string]string) error {
	prints := map[string]json.RawMessage{}
	raw, err := w.store.ProjectFingerprints(ctx, tenantID, parent)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	_ = json.Unmarshal(raw, &prints)
	for _, t := range rep.Tests {
		if t.Status == suite.StatusPassed && len(t.Actions) > 0 {
			prints[t.ID], _ = json.Marshal(t.Actions)
		}
	}
	b, _ := json.Marshal(prints)
	if b = redactJSON(secretText(secrets), b); b == nil {
		return nil
	}
	return w.store.KeepProjectFingerprints(ctx, tenantID, version, b)
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
