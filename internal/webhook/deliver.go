package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/webpilot/webpilot/internal/store"
)

// Store is what a Deliverer needs of the store.
type Store interface {
	ClaimDeliveries(ctx context.Context, n int, lease time.Duration) ([]store.DueDelivery, error)
	RecordAttempt(ctx context.Context, a store.AttemptResult) error
}

// Opener opens a webhook's sealed secret (sealed to the webhook's id).
type Opener interface {
	Open(sealed, associated string) ([]byte, error)
}

// Dialer makes the connections deliveries use; the egress guard's Dial.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Options tune a Deliverer; zero values take the defaults.
type Options struct {
	// Poll is how often due deliveries are looked for (1 s).
	Poll time.Duration
	// FirstRetry is the wait after a first failed attempt (5 s); each next
	// wait doubles, up to an hour.
	FirstRetry time.Duration
	// MaxAttempts ends a delivery failed after that many attempts (12:
	// about 3 hours of retries with the default first wait).
	MaxAttempts int
	// Timeout bounds one attempt, connection to answer (10 s).
	Timeout time.Duration
	// Parallel is how many requests are in flight at once (8).
	Parallel int
}

func (o Options) withDefaults() Options {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.FirstRetry <= 0 {
		o.FirstRetry = 5 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 12
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Parallel <= 0 {
		o.Parallel = 8
	}
	return o
}

// Deliverer sends due deliveries; several (one per dispatcher) may run
// against one store.
type Deliverer struct {
	store  Store
	opener Opener
	client *http.Client
	log    *slog.Logger
	o      Options
}

// NewDeliverer builds a Deliverer whose requests connect through dial.
func NewDeliverer(st Store, opener Opener, dial Dialer, log *slog.Logger, o Options) *Deliverer {
	o = o.withDefaults()
	if log == nil {
		log = slog.Default()
	}
	tr := &http.Transport{DialContext: dial, Proxy: nil, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second,
		TLSHandshakeTimeout: o.Timeout, ResponseHeaderTimeout: o.Timeout}
	client := &http.Client{Transport: tr, Timeout: o.Timeout,
		// A redirect is an answer that is not 2xx: the receiver is the URL
		// the tenant gave, not wherever it points.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Deliverer{store: st, opener: opener, client: client, log: log, o: o}
}

// Run sends due deliveries until ctx ends.
func (d *Deliverer) Run(ctx context.Context) {
	t := time.NewTicker(d.o.Poll)
	defer t.Stop()
	for {
		// A full batch may mean more are due: go on at once.
		for n := d.Once(ctx); n > 0 && ctx.Err() == nil; n = d.Once(ctx) {
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once sends one batch of due deliveries and answers how many it tried.
func (d *Deliverer) Once(ctx context.Context) int {
	// The claim outlives every attempt of the batch; an attempt not recorded
	// by then (this process died) is sent again.
	lease := 2*d.o.Timeout + 30*time.Second
	due, err := d.store.ClaimDeliveries(ctx, 4*d.o.Parallel, lease)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("claim webhook deliveries", "err", err)
		}
		return 0
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, d.o.Parallel)
	for _, dd := range due {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			d.attempt(ctx, dd)
		}()
	}
	wg.Wait()
	return len(due)
}

// backoff is the wait after attempt n failed: FirstRetry doubled n-1
// times, up to an hour, less up to a fifth at random so that a receiver
// coming back is not met by every delivery at once.
func (d *Deliverer) backoff(n int) time.Duration {
	w := d.o.FirstRetry
	for i := 1; i < n && w < time.Hour; i++ {
		w *= 2
	}
	w = min(w, time.Hour)
	return w - time.Duration(rand.Int64N(int64(w)/5+1))
}

func (d *Deliverer) attempt(ctx context.Context, dd store.DueDelivery) {
	log := d.log.With("delivery", dd.ID, "webhook", dd.WebhookID, "event", dd.Event, "attempt", dd.Attempt)
	start := time.Now()
	status, err := d.send(ctx, dd)
	res := store.AttemptResult{DeliveryID: dd.ID, Attempt: store.Attempt{N: dd.Attempt, Status: status,
		DurationMS: int(time.Since(start).Milliseconds())}}
	switch {
	case err == nil && status >= 200 && status < 300:
		res.Delivered = true
	case err != nil:
		res.Error = err.Error()
	default:
		res.Error = fmt.Sprintf("the receiver answered %d", status)
	}
	if !res.Delivered {
		if dd.Attempt >= d.o.MaxAttempts {
			res.GiveUp = true
		} else {
			res.RetryIn = d.backoff(dd.Attempt)
		}
		log.Info("webhook delivery failed", "status", status, "err", res.Error, "retry_in", res.RetryIn, "gave_up", res.GiveUp)
	}
	if ctx.Err() != nil && !res.Delivered {
		return // shutting down: the lease brings it back
	}
	if err := d.store.RecordAttempt(context.WithoutCancel(ctx), res); err != nil {
		log.Warn("record webhook attempt", "err", err)
	}
}

func (d *Deliverer) send(ctx context.Context, dd store.DueDelivery) (int, error) {
	secret, err := d.opener.Open(dd.SecretSealed, dd.WebhookID)
	if err != nil {
		return 0, errors.New("the webhook's secret could not be opened (the sealing key changed?)")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, dd.URL, bytes.NewReader(dd.Payload))
	if err != nil {
		return 0, fmt.Errorf("bad webhook URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "webpilot-webhooks/1")
	req.Header.Set(EventHeader, string(dd.Event))
	req.Header.Set(DeliveryHeader, dd.ID)
	req.Header.Set(SignatureHeader, Sign(string(secret), time.Now(), dd.Payload))
	resp, err := d.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // not the URL again
		}
		return 0, fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
