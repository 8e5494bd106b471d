package config_test

import (
	"context"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/webpilot/webpilot/internal/config"
)

// project loads docker-compose.yml with profile as `docker compose
// --profile PROFILE config` does (compose-go is the loader the compose
// CLI itself uses: schema validation, interpolation, merge keys,
// profiles), with the variables the file requires set.
func project(t *testing.T, profile string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"../../docker-compose.yml"},
		cli.WithName("webpilot"), cli.WithWorkingDirectory("../.."), cli.WithProfiles([]string{profile}),
		cli.WithEnv([]string{"POSTGRES_PASSWORD=pw", "WEBPILOT_SECRET_KEY=" + strings.Repeat("A", 43) + "=", "WEBPILOT_ADMIN_TOKEN=admin"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker compose --profile %s config: %v", profile, err)
	}
	return p
}

// TestComposeStartsTheClusterAndTheSingleMachineApart: `docker compose
// --profile cluster config` validates and starts three NATS servers routed
// to each other in one JetStream cluster, two dispatchers and three
// workers configured for a stream of three replicas on all three servers,
// PostgreSQL, and a proxy in front of both dispatchers, which trust only
// its address; the single profile starts the one-server topology and
// nothing of the cluster. Each process's settings pass its own
// configuration's checks.
func TestComposeStartsTheClusterAndTheSingleMachineApart(t *testing.T) {
	single := project(t, "single")
	if got := slices.Sorted(maps.Keys(single.Services)); !slices.Equal(got, []string{"dispatcher", "nats", "postgres", "worker"}) {
		t.Fatalf("--profile single starts %v", got)
	}

	p := project(t, "cluster")
	want := []string{"dispatcher-1", "dispatcher-2", "nats-1", "nats-2", "nats-3", "postgres", "proxy", "worker-cluster"}
	if got := slices.Sorted(maps.Keys(p.Services)); !slices.Equal(got, want) {
		t.Fatalf("--profile cluster starts %v, want %v", got, want)
	}
	nodes := []string{"nats-1", "nats-2", "nats-3"}
	for _, n := range nodes {
		cmd := strings.Join(p.Services[n].Command, " ")
		for _, part := range []string{"-js", "--server_name " + n, "--cluster_name webpilot", "--cluster nats://0.0.0.0:6222"} {
			if !strings.Contains(cmd, part) {
				t.Errorf("%s runs %q, without %q", n, cmd, part)
			}
		}
		for _, other := range nodes {
			if other != n && !strings.Contains(cmd, "nats-route://"+other+":6222") {
				t.Errorf("%s has no route to %s: %q", n, other, cmd)
			}
		}
		if len(p.Services[n].Volumes) != 1 {
			t.Errorf("%s keeps no store of its own", n)
		}
	}
	if r := p.Services["worker-cluster"].Deploy; r == nil || r.Replicas == nil || *r.Replicas != 3 {
		t.Errorf("worker-cluster runs %+v replicas, want 3", r)
	}
	proxyIP := p.Services["proxy"].Networks["cluster"].Ipv4Address
	if proxyIP == "" || len(p.Services["proxy"].Ports) != 1 || p.Services["proxy"].Ports[0].Target != 8080 {
		t.Errorf("the proxy has no fixed address or does not publish 8080: %+v", p.Services["proxy"])
	}
	for _, name := range []string{"dispatcher-1", "dispatcher-2", "worker-cluster"} {
		s := p.Services[name]
		env := map[string]string{}
		for k, v := range s.Environment {
			if v != nil {
				env[k] = *v
			}
		}
		for _, n := range nodes {
			if !strings.Contains(env["NATS_URL"], "nats://"+n+":4222") {
				t.Errorf("%s's NATS_URL %q leaves out %s", name, env["NATS_URL"], n)
			}
		}
		if env["WEBPILOT_STREAM_REPLICAS"] != "3" || env["WEBPILOT_STREAM_CLUSTER"] != "webpilot" {
			t.Errorf("%s keeps the stream at %q replicas in %q", name, env["WEBPILOT_STREAM_REPLICAS"], env["WEBPILOT_STREAM_CLUSTER"])
		}
		for _, n := range nodes {
			if _, ok := s.DependsOn[n]; !ok {
				t.Errorf("%s starts without waiting for %s", name, n)
			}
		}
		// The process's own configuration accepts what compose gives it.
		for k, v := range env {
			t.Setenv(k, v)
		}
		if strings.HasPrefix(name, "dispatcher") {
			d, err := config.LoadDispatcher()
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if !slices.Equal(d.TrustedProxies, []string{proxyIP}) {
				t.Errorf("%s trusts %v as its proxy, the proxy is at %s", name, d.TrustedProxies, proxyIP)
			}
			if d.Queue.Stream().Replicas != 3 {
				t.Errorf("%s makes a stream of %d replicas", name, d.Queue.Stream().Replicas)
			}
		} else if _, err := config.LoadWorker(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	conf, err := os.ReadFile("../../deploy/nginx-cluster.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dispatcher-1", "dispatcher-2"} {
		if n := len(regexp.MustCompile(`server `+d+`:8080`).FindAll(conf, -1)); n != 2 {
			t.Errorf("the proxy names %s in %d of its 2 upstreams", d, n)
		}
	}
	if !strings.Contains(string(conf), "hash $http_mcp_session_id") {
		t.Error("the proxy does not keep an MCP session on the dispatcher that opened it")
	}
}
