package config_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/webpilot/webpilot/internal/config"
)

// clean blanks every variable the configuration reads, so the machine's
// own environment does not leak into a case.
func clean(t *testing.T) {
	for _, name := range []string{"DATABASE_URL", "WEBPILOT_DATA_DIR", "WEBPILOT_SECRET_KEY", "WEBPILOT_ALLOW_HOSTS",
		"WEBPILOT_LOG_LEVEL", "WEBPILOT_LOG_FORMAT", "NATS_URL", "WEBPILOT_NATS_TOKEN", "NATS_CREDS", "NATS_CA", "WEBPILOT_NATS_PORT",
		"WEBPILOT_ACK_WAIT", "WEBPILOT_MAX_ATTEMPTS", "WEBPILOT_ADDR", "WEBPILOT_ADMIN_TOKEN", "WEBPILOT_DEFAULT_HOLD",
		"WEBPILOT_WORKER_ID", "WEBPILOT_CONCURRENCY", "WEBPILOT_DRAIN_GRACE", "PLAYWRIGHT_DRIVER_PATH", "WEBPILOT_CHROMIUM",
		"WEBPILOT_SPEC_RUNNER", "WEBPILOT_AXE", "WEBPILOT_METRICS_ADDR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "WEBPILOT_MODEL", "WEBPILOT_PRICES",
		"WEBPILOT_ARTIFACT_RETENTION", "WEBPILOT_CONSOLE_SESSION", "WEBPILOT_STEP_SCREENSHOTS", "OTEL_EXPORTER_OTLP_ENDPOINT", "WEBPILOT_TRACE_SAMPLE"} {
		t.Setenv(name, "")
	}
}

func TestDefaults(t *testing.T) {
	clean(t)
	t.Setenv("DATABASE_URL", "postgres://db/x")
	t.Setenv("WEBPILOT_ALLOW_HOSTS", "127.0.0.1,intranet:8443")
	d, err := config.LoadDispatcher()
	if err != nil {
		t.Fatal(err)
	}
	if d.Addr != "127.0.0.1:8080" || d.DefaultHold != 2 || d.DataDir != ".data" || d.NATS.Port != 4222 ||
		d.Queue.AckWait != 30*time.Second || d.Queue.MaxAttempts != 5 || d.Log.Level != slog.LevelInfo || d.Log.Format != "json" ||
		d.ArtifactRetention != 30*24*time.Hour || d.ConsoleSession != 12*time.Hour || d.Tracing.Endpoint != "" || d.Tracing.Sample != 1 {
		t.Fatalf("dispatcher defaults: %+v", d)
	}
	if len(d.AllowHosts) != 2 || d.AllowHosts[1] != "intranet:8443" {
		t.Fatalf("allowed hosts: %q", d.AllowHosts)
	}
	if q := d.Queue.Stream(); q.MaxDeliver != 100 || q.AckWait != 30*time.Second {
		t.Fatalf("stream: %+v", q)
	}
	w, err := config.LoadWorker()
	if err != nil {
		t.Fatal(err)
	}
	if w.Concurrency != 2 || w.Model.Name != "gpt-4o-mini" || w.Model.APIKey != "" || w.DrainGrace != nil || w.Chromium == "" || !w.StepShots {
		t.Fatalf("worker defaults: %+v", w)
	}
	t.Setenv("WEBPILOT_DRAIN_GRACE", "0s")
	if w, err = config.LoadWorker(); err != nil || w.DrainGrace == nil || *w.DrainGrace != 0 {
		t.Fatalf("a drain grace of 0s: %v %v", w.DrainGrace, err)
	}
}

// TestBadValuesAreNamed: every bad value is reported at once, each naming
// its variable.
func TestBadValuesAreNamed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    map[string]string
		worker bool
		want   []string
	}{
		{"no database", map[string]string{}, false, []string{"DATABASE_URL is required"}},
		{"unparsable", map[string]string{"DATABASE_URL": "x", "WEBPILOT_ACK_WAIT": "soon"}, false, []string{"WEBPILOT_ACK_WAIT"}},
		{"several at once", map[string]string{"DATABASE_URL": "x", "WEBPILOT_LOG_FORMAT": "xml", "WEBPILOT_MAX_ATTEMPTS": "0",
			"WEBPILOT_DEFAULT_HOLD": "-1", "WEBPILOT_SECRET_KEY": "short"}, false,
			[]string{"WEBPILOT_LOG_FORMAT", "WEBPILOT_MAX_ATTEMPTS", "WEBPILOT_DEFAULT_HOLD", "WEBPILOT_SECRET_KEY"}},
		{"short ack wait", map[string]string{"DATABASE_URL": "x", "WEBPILOT_ACK_WAIT": "10ms"}, false, []string{"WEBPILOT_ACK_WAIT must be a duration of at least 1s"}},
		{"log level", map[string]string{"DATABASE_URL": "x", "WEBPILOT_LOG_LEVEL": "loud"}, false, []string{"WEBPILOT_LOG_LEVEL"}},
		{"worker concurrency", map[string]string{"DATABASE_URL": "x", "WEBPILOT_CONCURRENCY": "65"}, true, []string{"WEBPILOT_CONCURRENCY"}},
		{"negative grace", map[string]string{"DATABASE_URL": "x", "WEBPILOT_DRAIN_GRACE": "-1s"}, true, []string{"WEBPILOT_DRAIN_GRACE"}},
		{"short retention", map[string]string{"DATABASE_URL": "x", "WEBPILOT_ARTIFACT_RETENTION": "10m", "WEBPILOT_CONSOLE_SESSION": "1s"}, false,
			[]string{"WEBPILOT_ARTIFACT_RETENTION must be a duration of at least 1h", "WEBPILOT_CONSOLE_SESSION"}},
		{"tracing", map[string]string{"DATABASE_URL": "x", "WEBPILOT_TRACE_SAMPLE": "1.5", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, true,
			[]string{"WEBPILOT_TRACE_SAMPLE must be a number from 0 to 1", "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL"}},
		{"step pictures", map[string]string{"DATABASE_URL": "x", "WEBPILOT_STEP_SCREENSHOTS": "maybe"}, true, []string{"WEBPILOT_STEP_SCREENSHOTS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clean(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var err error
			if tc.worker {
				_, err = config.LoadWorker()
			} else {
				_, err = config.LoadDispatcher()
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLogsAreJSONWithTheProcess(t *testing.T) {
	var b bytes.Buffer
	log := config.Log{Level: slog.LevelInfo, Format: "json"}.Logger(&b, "dispatcher")
	log.Debug("hidden")
	log.Info("listening", "job", "j1")
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
		t.Fatalf("not one JSON object per line: %q", b.String())
	}
	if rec["proc"] != "dispatcher" || rec["job"] != "j1" || rec["msg"] != "listening" || rec["level"] != "INFO" {
		t.Fatalf("record: %v", rec)
	}
}

// TestTheConsolesOriginsDefaultToTheListenAddress: without
// WEBPILOT_PUBLIC_ORIGIN the console trusts http:// and the listen address
// (a wildcard host as the names a local browser uses); a bad origin is
// refused at start, naming the variable.
func TestTheConsolesOriginsDefaultToTheListenAddress(t *testing.T) {
	for _, tc := range []struct {
		addr, public string
		want         []string
	}{
		{"127.0.0.1:8080", "", []string{"http://127.0.0.1:8080"}},
		{"0.0.0.0:9000", "", []string{"http://localhost:9000", "http://127.0.0.1:9000"}},
		{":9000", "", []string{"http://localhost:9000", "http://127.0.0.1:9000"}},
		{"127.0.0.1:8080", "https://webpilot.example.com,http://10.0.0.2:8080", []string{"https://webpilot.example.com", "http://10.0.0.2:8080"}},
	} {
		t.Setenv("WEBPILOT_ADDR", tc.addr)
		t.Setenv("WEBPILOT_PUBLIC_ORIGIN", tc.public)
		d, err := config.LoadDispatcher()
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Origins(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %q: origins %q, want %q", tc.addr, tc.public, got, tc.want)
		}
	}
	t.Setenv("WEBPILOT_PUBLIC_ORIGIN", "webpilot.example.com")
	if _, err := config.LoadDispatcher(); err == nil || !strings.Contains(err.Error(), "WEBPILOT_PUBLIC_ORIGIN") {
		t.Fatalf("a bare host: %v", err)
	}
}
