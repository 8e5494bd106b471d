// Tries every way out of the sandbox a hostile suite might, and prints
// what each attempt got as one JSON object: true means it got through.
const fs = require('fs');
const net = require('net');
const http = require('http');
const { spawn } = require('child_process');
const [canaryPort, hostSecretFile, otherRunFile, hostTmpMarker] = process.argv.slice(2);
const out = {};

const tryRead = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch { return null; } };
out.env = Object.keys(process.env).sort();
out.init_environ = tryRead('/proc/1/environ');
out.host_secret = tryRead(hostSecretFile);
out.other_run = tryRead(otherRunFile);
out.work_dir_listing = fs.readdirSync('/').sort();
out.passwd = tryRead('/etc/passwd');
out.group = tryRead('/etc/group');
out.user = (() => { try { return require('os').userInfo().username; } catch (e) { return 'error: ' + e.message; } })();

const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return true; } catch { return false; } };
out.write_usr = tryWrite('/usr/escape');
out.write_etc = tryWrite('/etc/escape');
out.write_runner = tryWrite('/runner/escape');
out.write_tmp_private = tryWrite('/tmp/' + hostTmpMarker); // allowed, but private
out.write_work = tryWrite('/work/ok');

const tryConnect = (port, host = '127.0.0.1') => new Promise((resolve) => {
  const s = net.connect({ port, host, timeout: 2000 });
  s.on('connect', () => { s.destroy(); resolve(true); });
  s.on('error', () => resolve(false));
  s.on('timeout', () => { s.destroy(); resolve(false); });
});

const viaProxy = () => new Promise((resolve) => {
  const req = http.request({ host: '127.0.0.1', port: 3128, method: 'GET', path: 'http://app.test/through-proxy', timeout: 5000 }, (res) => {
    let body = ''; res.on('data', (d) => body += d); res.on('end', () => resolve(body));
  });
  req.on('error', (e) => resolve('error: ' + e.message));
  req.on('timeout', () => { req.destroy(); resolve('timeout'); });
  req.end();
});

const forkBomb = () => new Promise((resolve) => {
  let started = 0, refused = false;
  const kids = [];
  for (let i = 0; i < 400; i++) {
    try {
      const k = spawn('/bin/sleep', ['5']);
      k.on('error', () => { refused = true; });
      kids.push(k);
      if (k.pid !== undefined) started++;
    } catch { refused = true; break; }
  }
  setTimeout(() => { kids.forEach((k) => { try { k.kill('SIGKILL'); } catch {} }); resolve({ started, refused }); }, 1500);
});

(async () => {
  out.canary = await tryConnect(Number(canaryPort));
  out.proxy = await viaProxy();
  out.fork = await forkBomb();
  console.log('PROBE ' + JSON.stringify(out));
})();
