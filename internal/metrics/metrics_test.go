package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/webpilot/webpilot/internal/metrics"
	"github.com/webpilot/webpilot/internal/store"
)

type fakeJobs struct {
	counts []store.JobCount
	oldest time.Duration
	err    error
}

func (f fakeJobs) JobCounts(context.Context) ([]store.JobCount, error) { return f.counts, f.err }
func (f fakeJobs) OldestQueued(context.Context) (time.Duration, error) { return f.oldest, f.err }

// values gathers the registry into name{label values} -> value.
func values(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("the scrape failed: %v", err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			k := f.GetName()
			for _, l := range m.GetLabel() {
				k += "," + l.GetValue()
			}
			out[k] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestCollectorReportsJobsAndQueue(t *testing.T) {
	t.Parallel()
	c := metrics.NewCollector(fakeJobs{counts: []store.JobCount{{Kind: "scenario", State: "queued", N: 3}, {Kind: "repair", State: "succeeded", N: 7}},
		oldest: 90 * time.Second}, func(context.Context) (int, error) { return 4, nil }, nil)
	got := values(t, c)
	for k, want := range map[string]float64{"webpilot_jobs,scenario,queued": 3, "webpilot_jobs,repair,succeeded": 7,
		"webpilot_queue_oldest_age_seconds": 90, "webpilot_queue_depth": 4,
		"webpilot_scrape_source_up,postgres": 1, "webpilot_scrape_source_up,nats": 1} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], want, got)
		}
	}
}

// TestAnUnreadableSourceIsReportedNotFatal: with the database down the
// scrape still answers, saying which source is down.
func TestAnUnreadableSourceIsReportedNotFatal(t *testing.T) {
	t.Parallel()
	c := metrics.NewCollector(fakeJobs{err: errors.New("connection refused")}, func(context.Context) (int, error) { return 0, nil }, nil)
	got := values(t, c)
	if v, ok := got["webpilot_scrape_source_up,postgres"]; !ok || v != 0 {
		t.Fatalf("postgres up = %v (present %v), want 0", v, ok)
	}
	if got["webpilot_scrape_source_up,nats"] != 1 {
		t.Fatal("nats reported down with the database")
	}
	if _, ok := got["webpilot_queue_oldest_age_seconds"]; ok {
		t.Fatal("an age was made up without the database")
	}
}
