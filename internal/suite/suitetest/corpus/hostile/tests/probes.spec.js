// A suite that tries every way out of the sandbox. Each test passes when
// its attempt got nothing; a failing test is an escape.
const { test, expect } = require('@playwright/test');
const fs = require('fs');
const net = require('net');

const read = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch { return null; } };
const connect = (port) => new Promise((resolve) => {
  const s = net.connect({ host: '127.0.0.1', port: Number(port), timeout: 2000 });
  s.on('connect', () => { s.destroy(); resolve(true); });
  s.on('error', () => resolve(false));
  s.on('timeout', () => { s.destroy(); resolve(false); });
});

test('the worker environment', async () => {
  const leaked = Object.keys(process.env).filter((k) => /WEBPILOT_SECRET|DATABASE_URL|OPENAI|NATS/.test(k));
  expect(leaked).toEqual([]);
});

test('PID 1 environment', async () => {
  expect(read('/proc/1/environ') || '').not.toMatch(/WEBPILOT_SECRET|DATABASE_URL|OPENAI_API_KEY/);
});

test('the data directory', async () => {
  expect(read(process.env.PROBE_SECRET_FILE)).toBeNull();
});

test("another run's files", async () => {
  expect(read(process.env.PROBE_OTHER_RUN)).toBeNull();
});

test('NATS, Postgres and loopback services', async () => {
  for (const port of (process.env.PROBE_PORTS || '').split(',').filter(Boolean)) {
    expect(await connect(port), `port ${port}`).toBe(false);
  }
});

test('writing outside the work directory', async () => {
  for (const p of ['/usr/escape', '/etc/escape', '/runner/escape', '/escape']) {
    let wrote = true;
    try { fs.writeFileSync(p, 'x'); } catch { wrote = false; }
    expect(wrote, p).toBe(false);
  }
});

test("the job's proxy to loopback, the cloud's metadata and private hosts", async ({ request }) => {
  // The test code's own HTTP goes through the job's egress proxy, which
  // refuses each of these (and the job lists what it refused).
  for (const url of ['http://127.0.0.1:4222/', 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/']) {
    let status = 0;
    try {
      status = (await request.get(url, { timeout: 3000 })).status();
    } catch {
      status = -1;
    }
    expect(status === -1 || status >= 400, url).toBe(true);
  }
});

test("the host's accounts, read or opened in the browser", async ({ page }) => {
  // The host's /etc/passwd names its accounts (root first). A run has its
  // own: neither its code nor its browser's file: URLs show the host's.
  expect(read('/etc/passwd') || '').not.toContain('root:');
  let shown = '';
  try {
    await page.goto('file:///etc/passwd', { timeout: 5000 });
    shown = await page.content();
  } catch {
    shown = '';
  }
  expect(shown).not.toContain('root:');
});

test('the kernel: a nested user namespace, and no filter', async () => {
  const { spawnSync } = require('child_process');
  const nested = spawnSync('unshare', ['-U', '-r', 'id', '-u'], { encoding: 'utf8' });
  expect((nested.stdout || '').trim(), 'root in a nested user namespace').not.toBe('0');
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  expect(status).toMatch(/^Seccomp:\s+2$/m);
  expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
});

test('memory no budget sees, and sockets a run never needs', async () => {
  // SysV shared memory held gigabytes no watchdog saw, and a netlink socket
  // reaches the kernel's network configuration: the run's filter refuses
  // both (ipcmk is util-linux's, always there; ip where installed).
  const { spawnSync } = require('child_process');
  const shm = spawnSync('ipcmk', ['-M', '1073741824'], { encoding: 'utf8' });
  expect(shm.error, 'ipcmk is not installed').toBeUndefined();
  expect(shm.status, `SysV shared memory: ${shm.stdout}`).not.toBe(0);
  const ip = spawnSync('ip', ['link', 'show'], { encoding: 'utf8' });
  if (!ip.error) {
    expect(ip.status, `a netlink socket: ${ip.stdout}`).not.toBe(0);
  }
});
