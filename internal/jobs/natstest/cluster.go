package natstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/webpilot/webpilot/internal/jobs"
)

// ServerPackage is the nats-server release, built from the module cache at
// the version go.mod pins (the one the dispatcher embeds).
const ServerPackage = "github.com/nats-io/nats-server/v2"

// BuildServer compiles nats-server into dir and returns its path.
func BuildServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "nats-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ServerPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build nats-server: %w\n%s", err, out)
	}
	return bin, nil
}

// ClusterName is the JetStream cluster's name.
const ClusterName = "webpilot"

// Cluster is a JetStream cluster of real nats-server processes on loopback
// ports, each storing under its own directory, so that a node can be
// SIGKILLed and started again on the same store, as on a machine that
// lost power.
type Cluster struct {
	Bin   string
	Token string
	dir   string

	mu    sync.Mutex
	nodes []*node
}

type node struct {
	name              string
	port, clusterPort int
	conf, log         string
	cmd               *exec.Cmd
	exited            chan struct{}
}

// StartCluster starts n clustered servers (bin from BuildServer) under dir,
// accepting only clients presenting token, and waits until JetStream has a
// meta leader.
func StartCluster(ctx context.Context, bin, dir string, n int, token string) (*Cluster, error) {
	c := &Cluster{Bin: bin, Token: token, dir: dir}
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i]))
	}
	for i := range n {
		nd := &node{name: fmt.Sprintf("n%d", i+1), port: ports[i], clusterPort: ports[n+i]}
		store := filepath.Join(dir, nd.name)
		if err := os.MkdirAll(store, 0o700); err != nil {
			return nil, err
		}
		nd.conf, nd.log = filepath.Join(dir, nd.name+".conf"), filepath.Join(dir, nd.name+".log")
		conf := fmt.Sprintf(`server_name: %q
listen: "127.0.0.1:%d"
authorization { token: %q }
jetstream { store_dir: %q, max_memory_store: 64MB, max_file_store: 1GB }
cluster {
  name: %q
  listen: "127.0.0.1:%d"
  routes: [%s]
}
`, nd.name, nd.port, token, store, ClusterName, nd.clusterPort, `"`+strings.Join(routes, `", "`)+`"`)
		if err := os.WriteFile(nd.conf, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, nd)
	}
	for i := range c.nodes {
		if err := c.Start(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.waitMeta(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// URLs are the client URLs of every node, comma-separated, as NATS_URL
// takes them.
func (c *Cluster) URLs() string {
	var urls []string
	for _, nd := range c.nodes {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", nd.port))
	}
	return strings.Join(urls, ",")
}

// Names are the nodes' server names, in order.
func (c *Cluster) Names() []string {
	var names []string
	for _, nd := range c.nodes {
		names = append(names, nd.name)
	}
	return names
}

// Index is the position of the node named name, or -1.
func (c *Cluster) Index(name string) int {
	for i, nd := range c.nodes {
		if nd.name == name {
			return i
		}
	}
	return -1
}

// Start starts node i (again) on its store and waits until it takes
// clients.
func (c *Cluster) Start(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	nd := c.nodes[i]
	if nd.cmd != nil {
		return fmt.Errorf("nats node %s is running", nd.name)
	}
	logf, err := os.OpenFile(nd.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.Bin, "-c", nd.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start nats node %s: %w", nd.name, err)
	}
	nd.cmd, nd.exited = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); logf.Close(); close(done) }(nd.exited)
	for deadline := time.Now().Add(15 * time.Second); ; {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", nd.port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-nd.exited:
			b, _ := os.ReadFile(nd.log)
			return fmt.Errorf("nats node %s exited at start:\n%s", nd.name, tail(b))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nats node %s did not take connections in 15 s", nd.name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill SIGKILLs node i: no shutdown, no flush.
func (c *Cluster) Kill(i int) error {
	c.mu.Lock()
	nd := c.nodes[i]
	cmd, exited := nd.cmd, nd.exited
	nd.cmd = nil
	c.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("nats node %s is not running", nd.name)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	return nil
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for i := range c.nodes {
		_ = c.Kill(i)
	}
}

// Log is node i's output so far (for a failed test).
func (c *Cluster) Log(i int) string {
	b, _ := os.ReadFile(c.nodes[i].log)
	return string(b)
}

// Connect is a client of the whole cluster.
func (c *Cluster) Connect(name string) (*nats.Conn, error) {
	return nats.Connect(c.URLs(), nats.Token(c.Token), nats.Name(name), nats.MaxReconnects(-1),
		nats.ReconnectWait(200*time.Millisecond), nats.RetryOnFailedConnect(true))
}

// waitMeta waits until the cluster answers JetStream requests (a meta
// leader is elected).
func (c *Cluster) waitMeta(ctx context.Context) error {
	nc, err := c.Connect("natstest-wait")
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the NATS cluster has no JetStream leader: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// StreamLeader is the server leading the job stream's replicas.
func StreamLeader(ctx context.Context, js jetstream.JetStream) (string, error) {
	s, err := js.Stream(ctx, jobs.StreamName)
	if err != nil {
		return "", err
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", errors.New("the job stream has no leader")
	}
	return info.Cluster.Leader, nil
}

// StreamCurrent says whether every replica of the job stream is current
// (a restarted node has caught up).
func StreamCurrent(ctx context.Context, js jetstream.JetStream, replicas int) bool {
	s, err := js.Stream(ctx, jobs.StreamName)
	if err != nil {
		return false
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != replicas-1 {
		return false
	}
	for _, p := range info.Cluster.Replicas {
		if !p.Current || p.Offline {
			return false
		}
	}
	return true
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
