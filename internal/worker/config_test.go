package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/worker"
)

// TestNewNamesWhatIsMissing: a worker is built from one Config; a missing
// dependency or a bad value is an error naming the field, and the zero
// fields take the named defaults (a drain grace left out is the default,
// one of zero means at once).
func TestNewNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	_, err := worker.New(worker.Config{Concurrency: -1})
	if err == nil {
		t.Fatal("a worker without its dependencies was built")
	}
	for _, want := range []string{"Config.Store is required", "Config.Consumer is required", "Config.Publisher is required",
		"Config.Browser is required", "Config.Policy is required", "Config.Sealer is required", "Concurrency must be at least 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	d := worker.Config{}.WithDefaults()
	if d.Concurrency != worker.DefaultConcurrency || d.AckWait != worker.DefaultAckWait || d.MaxAttempts != worker.DefaultMaxAttempts ||
		d.DrainGrace == nil || *d.DrainGrace != worker.DefaultDrainGrace || d.DrainHardStop != d.AckWait || d.StoreRetry != worker.DefaultStoreRetry {
		t.Fatalf("defaults: %+v", d)
	}
	atOnce := worker.Config{DrainGrace: new(time.Duration)}
	if g := atOnce.WithDefaults().DrainGrace; g == nil || *g != 0 {
		t.Fatalf("a grace of zero became %v", g)
	}
}
