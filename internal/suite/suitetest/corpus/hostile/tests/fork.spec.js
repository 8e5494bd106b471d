// A fork bomb: the sandbox's process limit must stop it well before the
// host notices (this test passes when it was stopped).
const { test, expect } = require('@playwright/test');
const { spawn } = require('child_process');

test('a fork bomb', async () => {
  let started = 0;
  const kids = [];
  for (let i = 0; i < 700; i++) {
    let k;
    try {
      k = spawn('/bin/sleep', ['3']);
    } catch {
      break;
    }
    k.on('error', () => {});
    if (k.pid === undefined) break;
    started++;
    kids.push(k);
  }
  kids.forEach((k) => { try { k.kill('SIGKILL'); } catch {} });
  expect(started).toBeLessThan(600);
});
