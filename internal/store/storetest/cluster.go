package storetest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Cluster is a private PostgreSQL cluster that a test (or a drill) can stop
// and start again, to exercise outages; the shared test cluster must stay up.
type Cluster struct {
	URL    string
	dir    string
	script string
	env    []string
}

// StartCluster initialises and starts a cluster in a new directory under
// /var/tmp (the postgres user must be able to reach it) on a free local
// port, through the project's scripts/pg.sh. Remove stops and deletes it.
func StartCluster() (*Cluster, error) {
	script, err := pgScript()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("/var/tmp", "webpilot-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, script: script, env: append(os.Environ(), "WEBPILOT_PG_PORT="+strconv.Itoa(port), "WEBPILOT_PG_DIR="+dir+"/pg")}
	out, err := c.run("start")
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	c.URL = strings.TrimSpace(out)
	return c, nil
}

// Stop shuts the cluster down (fast: open connections are cut).
func (c *Cluster) Stop() error {
	_, err := c.run("stop")
	return err
}

// Remove stops the cluster and deletes its files.
func (c *Cluster) Remove() {
	_ = c.Stop()
	_ = os.RemoveAll(c.dir)
}

// Start starts a stopped cluster again on the same port.
func (c *Cluster) Start() error {
	_, err := c.run("start")
	return err
}

func (c *Cluster) run(verb string) (string, error) {
	cmd := exec.Command("bash", c.script, verb)
	cmd.Env = c.env
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("pg.sh %s: %w: %s", verb, err, stderr)
	}
	return string(out), nil
}

// pgScript finds scripts/pg.sh at the module root above the working directory.
func pgScript() (string, error) {
	dir, _ := os.Getwd()
	for dir != "/" && dir != "." {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "pg.sh"), nil
		}
		dir = filepath.Dir(dir)
	}
	return "", fmt.Errorf("storetest: scripts/pg.sh not found above the working directory")
}

// FreePort returns a local TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
