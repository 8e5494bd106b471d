// webpilot's progress reporter: a line per test as it starts and ends,
// appended as it happens, so that a run stopped before the runner writes
// its report still tells every test that finished and names the others.
const fs = require('fs');

const clip = (s, n) => (s && s.length > n ? s.slice(0, n) : s || '');

class Progress {
  constructor(options) {
    this.file = options.outputFile;
  }
  write(line) {
    try {
      fs.appendFileSync(this.file, JSON.stringify(line) + '\n');
    } catch (e) {
      // Progress is a help, never a reason to fail the run.
    }
  }
  site(test) {
    const titles = test.titlePath().slice(3);
    const project = test.parent.project();
    return {
      file: test.location.file,
      line: test.location.line,
      column: test.location.column,
      titles: titles.filter((t, i) => t !== '' || i === titles.length - 1),
      project: (project && project.name) || '',
    };
  }
  onBegin(config, suite) {
    this.write({ event: 'begin', tests: suite.allTests().map((t) => this.site(t)) });
  }
  onTestBegin(test, result) {
    this.write({ event: 'start', ...this.site(test), retry: result.retry });
  }
  onTestEnd(test, result) {
    const trace = (result.attachments || []).find((a) => a.name === 'trace' && a.path);
    const error = (result.errors || []).map((e) => e.message || '').find((m) => m) || '';
    this.write({
      event: 'end',
      ...this.site(test),
      retry: result.retry,
      status: result.status,
      outcome: test.outcome(),
      duration: result.duration,
      error: clip(error, 4000),
      trace: trace ? trace.path : '',
    });
  }
  printsToStdio() {
    return false;
  }
}

module.exports = Progress;
