package suite

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultRegistry is where a lockfile's packages come from unless the
// worker is configured with another registry.
const DefaultRegistry = "https://registry.npmjs.org/"

// DefaultDepsDir is where installed packages are cached unless the worker
// is configured otherwise: under the system's temporary directory, which
// the sandbox's users can reach.
func DefaultDepsDir() string { return filepath.Join(os.TempDir(), "webpilot-deps") }

// lockfileName is the lockfile whose packages a project may depend on.
const lockfileName = "package-lock.json"

// Deps installs the packages a project's lockfile pins, once per lockfile:
// npm ci with --ignore-scripts (no package's own code runs while
// installing), into a cache keyed by the lockfile's hash. Only packages
// resolved from the registry are installed; a lockfile that points
// anywhere else (another host, a git repository, a local path) is refused
// before npm sees it, since npm would fetch whatever address it names.
type Deps struct {
	// Dir is the cache: one directory per lockfile hash. Runs' users read
	// it through the sandbox, so it must be world-readable (required).
	Dir string
	// Registry is the npm registry (DefaultRegistry when empty).
	Registry string
	// Npm is the npm binary ("npm" on PATH when empty).
	Npm string
	// Timeout bounds one installation (5 minutes when zero).
	Timeout time.Duration

	mu      sync.Mutex
	pending map[string]*sync.Mutex
}

// lockfile is the part of an npm lockfile (version 2 or 3) installs read.
type lockfile struct {
	LockfileVersion int                    `json:"lockfileVersion"`
	Packages        map[string]lockPackage `json:"packages"`
}

type lockPackage struct {
	Name                 string            `json:"name,omitempty"`
	Version              string            `json:"version,omitempty"`
	Resolved             string            `json:"resolved,omitempty"`
	Integrity            string            `json:"integrity,omitempty"`
	Link                 bool              `json:"link,omitempty"`
	Dependencies         map[string]string `json:"dependencies,omitempty"`
	DevDependencies      map[string]string `json:"devDependencies,omitempty"`
	OptionalDependencies map[string]string `json:"optionalDependencies,omitempty"`
}

// packageOf names the package a lockfile key (node_modules/a/node_modules/@s/b)
// installs.
func packageOf(key string) string {
	i := strings.LastIndex(key, "node_modules/")
	if i < 0 {
		return key
	}
	return key[i+len("node_modules/"):]
}

// readLockfile checks a project's lockfile: every package it installs comes
// from the registry (a package without an address is fetched from it), with an integrity hash, and @playwright/test is among
// them. Problems are ProjectErrors naming the lockfile and the package.
func (d *Deps) readLockfile(raw []byte) (lockfile, error) {
	bad := func(format string, a ...any) error {
		return &ProjectError{Path: lockfileName, Problem: fmt.Sprintf(format, a...)}
	}
	var lf lockfile
	if err := json.Unmarshal(raw, &lf); err != nil {
		return lf, bad("is not a lockfile npm reads: %v", err)
	}
	if lf.LockfileVersion < 2 || lf.Packages == nil {
		return lf, bad("lockfileVersion %d is not supported: regenerate it with npm 7 or later (lockfileVersion 2 or 3)", lf.LockfileVersion)
	}
	reg, err := url.Parse(d.registry())
	if err != nil {
		return lf, fmt.Errorf("the registry %q: %w", d.registry(), err)
	}
	keys := make([]string, 0, len(lf.Packages))
	for k := range lf.Packages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" {
			continue
		}
		p := lf.Packages[k]
		name := packageOf(k)
		if !strings.HasPrefix(k, "node_modules/") || strings.Contains(k, "..") {
			return lf, bad("the package %q is not installed from the registry (a workspace or a local path): only registry packages are installed", k)
		}
		if p.Link {
			return lf, bad("the package %s is a link to %q: only registry packages are installed", name, p.Resolved)
		}
		// No address: npm fetches it from the registry it is given.
		if p.Resolved != "" && !fromRegistry(p.Resolved, reg) {
			return lf, bad("the package %s resolves to %q, not to the registry %s: only registry packages are installed", name, p.Resolved, d.registry())
		}
		if p.Integrity == "" {
			return lf, bad("the package %s has no integrity hash", name)
		}
	}
	if _, ok := lf.Packages["node_modules/@playwright/test"]; !ok {
		return lf, bad("@playwright/test is not among its packages: the project's tests need it")
	}
	return lf, nil
}

// fromRegistry reports an address on the registry (or on npm's, which npm
// rewrites to the registry it is given).
func fromRegistry(addr string, reg *url.URL) bool {
	u, err := url.Parse(addr)
	return err == nil && u.Scheme == "https" && (u.Host == reg.Host || u.Host == "registry.npmjs.org") &&
		u.User == nil && !strings.Contains(u.Path, "..")
}

func (d *Deps) registry() string {
	if d.Registry == "" {
		return DefaultRegistry
	}
	return d.Registry
}

// noVersion is npm's word for a version the registry does not have.
var noVersion = regexp.MustCompile(`No matching version found for \S+`)

// registryMiss is npm's word for a package the registry does not have.
var registryMiss = regexp.MustCompile(`404 Not Found - GET (\S+)`)

// Install installs the lockfile's packages (once; later calls find them in
// the cache) and returns the directory holding their node_modules.
func (d *Deps) Install(ctx context.Context, p Project) (string, error) {
	f, ok := p.File(lockfileName)
	raw := f.Content
	if !ok {
		return "", errors.New("the project has no lockfile")
	}
	lf, err := d.readLockfile(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	// The manifest npm ci checks the lockfile against is the lockfile's own
	// root: the project's package.json (its scripts, its config) is never
	// handed to npm.
	root := lf.Packages[""]
	manifest := map[string]any{"name": cmp.Or(root.Name, "project"), "version": cmp.Or(root.Version, "0.0.0"), "private": true}
	for k, v := range map[string]map[string]string{"dependencies": root.Dependencies, "devDependencies": root.DevDependencies,
		"optionalDependencies": root.OptionalDependencies} {
		if len(v) > 0 {
			manifest[k] = v
		}
	}
	mb, _ := json.Marshal(manifest)
	return d.install(ctx, hex.EncodeToString(sum[:16]), lockfileName, map[string][]byte{"package.json": mb, lockfileName: raw},
		"ci", "--omit=peer")
}

// Runner installs @playwright/test at version (an exact version or a
// range, as a package.json asks it), alone, once per version asked, and
// returns the directory holding its node_modules.
func (d *Deps) Runner(ctx context.Context, version string) (string, error) {
	sum := sha256.Sum256([]byte("@playwright/test@" + version))
	mb, _ := json.Marshal(map[string]any{"name": "runner", "version": "0.0.0", "private": true,
		"devDependencies": map[string]string{"@playwright/test": version}})
	return d.install(ctx, "pwtest-"+hex.EncodeToString(sum[:12]), "package.json", map[string][]byte{"package.json": mb},
		"install", "--no-save")
}

// install runs npm (command and its flags) on files in a fresh directory
// of the cache, once per key (later calls find it there), with no
// package's scripts; a failure is a problem of the project's file path.
func (d *Deps) install(ctx context.Context, key, path string, files map[string][]byte, command ...string) (string, error) {
	dir := filepath.Join(d.Dir, key)

	// One installation per key at a time; the others wait for it.
	d.mu.Lock()
	if d.pending == nil {
		d.pending = map[string]*sync.Mutex{}
	}
	m := d.pending[key]
	if m == nil {
		m = &sync.Mutex{}
		d.pending[key] = m
	}
	d.mu.Unlock()
	m.Lock()
	defer m.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@playwright", "test", "cli.js")); err == nil {
		return dir, nil
	}

	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return "", fmt.Errorf("the dependency cache: %w", err)
	}
	tmp, err := os.MkdirTemp(d.Dir, "install-")
	if err != nil {
		return "", fmt.Errorf("the dependency cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", err
		}
	}
	timeout := d.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	npm := cmp.Or(d.Npm, "npm")
	args := slices.Concat(command, []string{"--ignore-scripts", "--no-audit", "--no-fund", "--registry", d.registry()})
	cmd := exec.CommandContext(ictx, npm, args...)
	cmd.Dir = tmp
	// npm's own environment: nothing of the worker's secrets.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "npm_config_cache=" + filepath.Join(d.Dir, ".npm"),
		"npm_config_update_notifier=false", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1"}
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		text := out.String()
		if m := registryMiss.FindStringSubmatch(text); m != nil {
			return "", &ProjectError{Path: path, Problem: fmt.Sprintf("a package it asks for cannot be provided: the registry has no %s", m[1])}
		}
		if noVersion.MatchString(text) {
			return "", &ProjectError{Path: path, Problem: "a package it asks for cannot be provided: " + noVersion.FindString(text)}
		}
		if ictx.Err() != nil {
			return "", &ProjectError{Path: path, Problem: fmt.Sprintf("installing its packages took longer than %s", timeout)}
		}
		return "", &ProjectError{Path: path, Problem: "npm " + command[0] + " failed: " + lastBytes(strings.TrimSpace(text), 600)}
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(dir); serr != nil {
			return "", fmt.Errorf("the dependency cache: %w", err)
		}
	}
	return dir, nil
}
