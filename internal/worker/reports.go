package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/webpilot/webpilot/internal/store"
	"github.com/webpilot/webpilot/internal/suite"
)

// keepRunReports stores what a file's run leaves for its project run's
// reports: its blob report (merged once every file has run) and its
// failing tests' traces (each test's TraceFile names its artifact), the
// job's secrets taken out of both. It answers what could not be kept.
func (w *Worker) keepRunReports(ctx context.Context, claim store.Claim, rep *suite.RunReport, secrets map[string]string) []string {
	redact := func(b []byte) ([]byte, error) { return b, nil }
	if len(secrets) > 0 {
		text := secretText(secrets)
		redact = func(b []byte) ([]byte, error) { return suite.RedactZip(b, text) }
	}
	var problems []string
	for i := range rep.Tests {
		t := &rep.Tests[i]
		if len(t.TraceZip) == 0 {
			continue
		}
		b, err := redact(t.TraceZip)
		t.TraceZip = nil
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: its trace cannot be kept: %v", t.Title(), err))
			continue
		}
		name := fmt.Sprintf("trace-%03d.zip", i+1)
		if err := w.retry.do(ctx, "store a trace", func() error { return w.store.AddArtifact(ctx, claim.JobID, "trace", name, b) }); err != nil {
			problems = append(problems, fmt.Sprintf("%s: its trace was not stored: %v", t.Title(), err))
			continue
		}
		t.TraceFile = name
	}
	if rep.BlobProblem != "" {
		return append(problems, rep.BlobProblem)
	}
	if len(rep.Blob) == 0 {
		return problems
	}
	b, err := redact(rep.Blob)
	rep.Blob = nil
	if err != nil {
		return append(problems, "its blob report cannot be kept: "+err.Error())
	}
	if err := w.retry.do(ctx, "store the blob report", func() error {
		return w.store.AddArtifact(ctx, claim.JobID, "blob", suite.BlobArtifact, b)
	}); err != nil {
		problems = append(problems, "its blob report was not stored: "+err.Error())
	}
	return problems
}

// ProjectRunResult is a project_run job's result: every file's outcome as
// its job ended, and the run's merged reports.
type ProjectRunResult struct {
	Suite   store.BulkReport `json:"suite"`
	Reports suite.RunReports `json:"reports"`
}

// concludeProjectRun ends a project run whose files' jobs have all ended:
// their blob reports merged by the runner into the run's junit XML and
// html report, and their failing tests' traces listed. A merge that fails
// leaves the run's verdicts as they are and says why it has no reports.
func (w *Worker) concludeProjectRun(ctx context.Context, claim store.Claim, kids []store.ChildOutcome, log *slog.Logger) outcome {
	rep, final, msg, err := w.store.SettledReport(ctx, claim.TenantID, claim.JobID)
	if err != nil {
		return handedBack(err)
	}
	if final == store.JobStateFailed {
		// Its jobs are parts of several files each: the run says which
		// files failed, as the runner's own summary would.
		msg = cmp.Or(failedFiles(kids), msg)
	}
	var reports suite.RunReports
	var blobs [][]byte
	var missing []string
	reports.Tests = map[suite.TestStatus]int{}
	for _, k := range kids {
		var res ProjectFileResult
		_ = json.Unmarshal(k.Result, &res)
		reports.Files += max(len(res.Files), 1)
		for _, t := range res.Tests {
			reports.Tests[t.Status]++
			if t.TraceFile != "" {
				reports.Traces = append(reports.Traces, suite.TraceDownload{Test: t.File + " › " + t.Title(), File: t.File, Line: t.Line,
					JobID: k.JobID, Artifact: t.TraceFile})
			}
		}
		_, blob, err := w.store.Artifact(ctx, claim.TenantID, k.JobID, suite.BlobArtifact)
		switch {
		case errors.Is(err, store.ErrNotFound):
			missing = append(missing, k.Key)
		case err != nil:
			return handedBack(err)
		default:
			blobs = append(blobs, blob)
		}
	}
	if len(missing) > 0 {
		reports.Problem = fmt.Sprintf("%d of %d files left no blob report (%s): the reports leave them out", len(missing), len(kids), strings.Join(missing, ", "))
	}
	if len(blobs) > 0 {
		merged, err := w.cfg.Projects.MergeReports(ctx, blobs)
		if err != nil {
			if ctx.Err() != nil {
				return handedBack(ctx.Err())
			}
			log.Warn("the run's reports were not merged", "err", err)
			reports.Problem = strings.TrimPrefix(reports.Problem+"; ", "; ") + "the junit and html reports could not be made: " + err.Error()
		} else {
			for _, a := range []struct {
				kind, name string
				content    []byte
				at         *string
			}{{"junit", suite.JUnitArtifact, merged.JUnit, &reports.JUnit}, {"html", suite.HTMLArtifact, merged.HTML, &reports.HTML}} {
				if err := w.retry.do(ctx, "store a report", func() error {
					return w.store.AddArtifact(ctx, claim.JobID, a.kind, a.name, a.content)
				}); err != nil {
					return handedBack(err)
				}
				*a.at = a.name
			}
		}
	}
	result, err := json.Marshal(ProjectRunResult{Suite: rep, Reports: reports})
	if err != nil {
		return failed("encode the run's report: " + err.Error())
	}
	log.Info("concluded project run", "files", len(kids), "junit", reports.JUnit != "", "traces", len(reports.Traces))
	return outcome{Finish: store.Finish{State: final, Result: result, Error: msg}}
}

// failedFiles says which files of a run's parts failed ("" when none
// can be told): a file whose test failed or was not reached, every file
// of a part that ended with no result or with an error of the run's own.
func failedFiles(kids []store.ChildOutcome) string {
	var failed []string
	all := 0
	for _, k := range kids {
		var res ProjectFileResult
		if json.Unmarshal(k.Result, &res) != nil || len(res.Files) == 0 {
			all++
			if k.State != store.JobStateSucceeded {
				failed = append(failed, k.Key)
			}
			continue
		}
		all += len(res.Files)
		for _, f := range res.Files {
			bad := len(res.Errors) > 0 || res.Limit != ""
			for _, t := range res.Tests {
				if t.File == f && t.Status != suite.StatusPassed && t.Status != suite.StatusSkipped && t.Status != suite.StatusFlaky {
					bad = true
				}
			}
			if bad {
				failed = append(failed, f)
			}
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d files failed: %s", len(failed), all, strings.Join(failed, ", "))
}
