// Runs inside the sandbox, whose network namespace has only loopback: it
// listens on the proxy address the suite is given and carries each
// connection over the Unix socket the host bound in, to the job's egress
// proxy. Then it runs the command and exits with its status.
const net = require('net');
const { spawn } = require('child_process');
const [listen, socket, ...cmd] = process.argv.slice(2);
const [host, port] = listen.split(':');
const server = net.createServer((c) => {
  const up = net.connect(socket);
  c.pipe(up).pipe(c);
  c.on('error', () => up.destroy());
  up.on('error', () => c.destroy());
});
server.listen(Number(port), host, () => {
  const child = spawn(cmd[0], cmd.slice(1), { stdio: 'inherit' });
  child.on('exit', (code, signal) => process.exit(code === null ? 128 + (signal ? 9 : 0) : code));
  child.on('error', (err) => { console.error('sandbox: ' + err.message); process.exit(127); });
});
