// Package metrics exposes the state of the whole service to Prometheus as
// the dispatcher sees it: jobs by kind and state, and how deep and how old
// the queue is. Each process's own activity (HTTP requests, submissions,
// steps, model calls) is counted where it happens, in the api and worker
// packages.
package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/webpilot/webpilot/internal/store"
)

// Namespace prefixes every webpilot metric.
const Namespace = "webpilot"

// Jobs is what the collector reads of the jobs table.
type Jobs interface {
	JobCounts(ctx context.Context) ([]store.JobCount, error)
	OldestQueued(ctx context.Context) (time.Duration, error)
}

// Collector reads the service's state at each scrape.
type Collector struct {
	jobs    Jobs
	inQueue func(context.Context) (int, error)
	log     *slog.Logger

	jobsDesc, depthDesc, ageDesc, upDesc *prometheus.Desc
}

// scrapeTimeout bounds the queries of one scrape.
const scrapeTimeout = 3 * time.Second

// NewCollector reads jobs from Postgres and the stream's backlog through
// inQueue (messages not yet delivered plus delivered and unacknowledged).
func NewCollector(jobs Jobs, inQueue func(context.Context) (int, error), log *slog.Logger) *Collector {
	return &Collector{jobs: jobs, inQueue: inQueue, log: log,
		jobsDesc:  prometheus.NewDesc(Namespace+"_jobs", "Jobs by kind and state.", []string{"kind", "state"}, nil),
		depthDesc: prometheus.NewDesc(Namespace+"_queue_depth", "Job messages in the stream: not yet delivered, or delivered and not acknowledged.", nil, nil),
		ageDesc:   prometheus.NewDesc(Namespace+"_queue_oldest_age_seconds", "How long the longest-waiting queued job has waited.", nil, nil),
		upDesc:    prometheus.NewDesc(Namespace+"_scrape_source_up", "Whether the last scrape could read a source (1) or not (0).", []string{"source"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobsDesc
	ch <- c.depthDesc
	ch <- c.ageDesc
	ch <- c.upDesc
}

// Collect implements prometheus.Collector. A source that cannot be read
// is reported as down rather than failing the whole scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	up := func(source string, err error) {
		v := 1.0
		if err != nil {
			v = 0
			if c.log != nil {
				c.log.Warn("metrics: source unreadable", "source", source, "err", err)
			}
		}
		ch <- prometheus.MustNewConstMetric(c.upDesc, prometheus.GaugeValue, v, source)
	}
	counts, err := c.jobs.JobCounts(ctx)
	for _, jc := range counts {
		ch <- prometheus.MustNewConstMetric(c.jobsDesc, prometheus.GaugeValue, float64(jc.N), jc.Kind, string(jc.State))
	}
	if err == nil {
		var age time.Duration
		if age, err = c.jobs.OldestQueued(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(c.ageDesc, prometheus.GaugeValue, age.Seconds())
		}
	}
	up("postgres", err)
	if c.inQueue != nil {
		n, err := c.inQueue(ctx)
		if err == nil {
			ch <- prometheus.MustNewConstMetric(c.depthDesc, prometheus.GaugeValue, float64(n))
		}
		up("nats", err)
	}
}
