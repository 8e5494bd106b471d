package config_test

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"
	"go.yaml.in/yaml/v3"

	"github.com/webpilot/webpilot/internal/config"
)

// The images and the compose file cannot be built or started here (no
// Docker engine), so the rules a deployment must keep are checked on the
// files themselves: what each image runs as, how it reports its health,
// what the build context leaves out, and that compose gives each service
// only variables its configuration reads — the dispatcher never a model key.

// stage is one FROM … AS name of a Dockerfile and its instructions.
type stage struct {
	name  string
	lines []string // instruction lines, continuations joined
}

func dockerfile(t *testing.T, path string) map[string]stage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stages := map[string]stage{}
	var cur *stage
	var pending string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line, pending = pending+line, ""
		if m := regexp.MustCompile(`(?i)^FROM\s+\S+\s+AS\s+(\S+)$`).FindStringSubmatch(line); m != nil {
			stages[m[1]] = stage{name: m[1]}
			s := stages[m[1]]
			cur = &s
		}
		if cur != nil {
			cur.lines = append(cur.lines, line)
			stages[cur.name] = *cur
		}
	}
	return stages
}

func (s stage) last(instr string) string {
	out := ""
	for _, l := range s.lines {
		if strings.HasPrefix(strings.ToUpper(l), instr+" ") {
			out = strings.TrimSpace(l[len(instr):])
		}
	}
	return out
}

func TestImagesRunAsNonRootAndReportHealth(t *testing.T) {
	t.Parallel()
	stages := dockerfile(t, "../../Dockerfile")
	for _, name := range []string{"dispatcher", "worker"} {
		s, ok := stages[name]
		if !ok {
			t.Fatalf("no %s stage (docker build --target %s)", name, name)
		}
		user := s.last("USER")
		if user == "" || user == "root" || strings.HasPrefix(user, "0") || strings.HasPrefix(user, "root:") {
			t.Errorf("%s runs as %q, want a non-root user", name, user)
		}
		hc := s.last("HEALTHCHECK")
		if !strings.Contains(hc, "healthcheck") {
			t.Errorf("%s has no HEALTHCHECK asking the process (%q)", name, hc)
		}
		if strings.Contains(strings.Join(s.lines, "\n"), "OPENAI") {
			t.Errorf("%s bakes a model setting into the image", name)
		}
	}
	if ep := stages["worker"].last("ENTRYPOINT"); !strings.Contains(ep, "tini") {
		t.Errorf("the worker's entrypoint %q has no init process to reap Chromium's children", ep)
	}
	if strings.Contains(strings.Join(stages["dispatcher"].lines, "\n"), "chromium") {
		t.Error("the dispatcher image carries a browser")
	}
}

func TestBuildContextLeavesOutHistoryCachesAndKeys(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			entries = append(entries, l)
		}
	}
	for _, must := range []string{".git", ".cache", ".data", "**/*.key", "**/*.token"} {
		if !slices.Contains(entries, must) {
			t.Errorf(".dockerignore does not leave out %s", must)
		}
	}
}

// compose is the part of docker-compose.yml the rules read.
type compose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Restart     string            `yaml:"restart"`
		Healthcheck *struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Build *struct {
			Target string `yaml:"target"`
		} `yaml:"build"`
		SecurityOpt []string `yaml:"security_opt"`
	} `yaml:"services"`
}

func keys[T any](t *testing.T) map[string]bool {
	t.Helper()
	var c T
	params, err := env.GetFieldParams(&c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range params {
		out[p.Key] = true
	}
	return out
}

func TestComposeStartsInOrderAndGivesEachServiceItsOwnSettings(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for name, s := range c.Services {
		if s.Restart != "unless-stopped" && s.Restart != "always" {
			t.Errorf("%s restarts %q", name, s.Restart)
		}
		for dep, d := range s.DependsOn {
			if d.Condition != "service_healthy" {
				t.Errorf("%s starts when %s has started (%q), not when it is ready", name, dep, d.Condition)
			}
			// The dispatcher's image reports its own health (HEALTHCHECK).
			if d := c.Services[dep]; d.Healthcheck == nil && (d.Build == nil || d.Build.Target != "dispatcher") {
				t.Errorf("%s waits for %s, which has no healthcheck", name, dep)
			}
		}
	}
	for name, target := range map[string]string{"dispatcher": "dispatcher", "worker": "worker",
		"dispatcher-1": "dispatcher", "dispatcher-2": "dispatcher", "worker-cluster": "worker"} {
		s, ok := c.Services[name]
		if !ok || s.Build == nil || s.Build.Target != target {
			t.Fatalf("%s is not built from the %s image target", name, target)
		}
		want := map[string]map[string]bool{"dispatcher": keys[config.Dispatcher](t), "worker": keys[config.Worker](t)}[target]
		for k := range s.Environment {
			if !want[k] {
				t.Errorf("%s is given %s, which its configuration does not read", name, k)
			}
			if target == "dispatcher" && strings.HasPrefix(k, "OPENAI_") {
				t.Errorf("%s is given %s: only workers call a model", name, k)
			}
		}
	}
	// The same NATS as the server the dispatcher embeds without Docker.
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github\.com/nats-io/nats-server/v2 v(\d+\.\d+\.\d+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod names no nats-server")
	}
	for _, name := range []string{"nats", "nats-1", "nats-2", "nats-3"} {
		if img := c.Services[name].Image; !strings.HasPrefix(img, "nats:"+string(m[1])) {
			t.Errorf("compose's %s runs %s, the embedded server is %s", name, img, m[1])
		}
	}
}

// TestTheWorkerImageCanSandboxCustomerCode: the worker image has what the
// sandbox runs (bubblewrap, node, setpriv and prlimit from util-linux,
// which Debian always installs), and compose lets the worker's container
// create the user namespace bubblewrap needs; the dispatcher, which runs no
// customer code, keeps the default confinement.
func TestTheWorkerImageCanSandboxCustomerCode(t *testing.T) {
	t.Parallel()
	worker := dockerfile(t, "../../Dockerfile")["worker"]
	installed := strings.Join(worker.lines, "\n")
	for _, pkg := range []string{"bubblewrap", "nodejs", "chromium"} {
		if !regexp.MustCompile(`apt-get install[^\n]*\b` + pkg + `\b`).MatchString(installed) {
			t.Errorf("the worker image does not install %s", pkg)
		}
	}
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"seccomp=unconfined", "apparmor=unconfined"} {
		if !slices.Contains(c.Services["worker"].SecurityOpt, opt) {
			t.Errorf("the worker's container lacks %s: bubblewrap cannot create its user namespace", opt)
		}
	}
	if opts := c.Services["dispatcher"].SecurityOpt; len(opts) > 0 {
		t.Errorf("the dispatcher runs no customer code, yet its confinement is loosened: %v", opts)
	}
}
