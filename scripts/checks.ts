/**
 * The checks `npm test` runs before jest, at the same time: `lint:spec` and `check:generated`
 * each keep one core busy for a few seconds while `typecheck` keeps the other for longer, so
 * side by side they take the time of the longest. Each one's output is printed whole when it
 * ends (never interleaved), under a line naming it; any that fails fails the command.
 */
import { spawn } from 'node:child_process';

const CHECKS = ['lint:spec', 'check:generated', 'typecheck'];

interface Outcome {
  name: string;
  code: number | null;
  output: string;
  seconds: number;
}

function run(name: string): Promise<Outcome> {
  const started = Date.now();
  const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((done) => {
    child.on('error', (error) => done({ name, code: null, output: `${output}${error.message}\n`, seconds: (Date.now() - started) / 1000 }));
    child.on('close', (code) => done({ name, code, output, seconds: (Date.now() - started) / 1000 }));
  });
}

async function main(): Promise<void> {
  const outcomes = await Promise.all(
    CHECKS.map(async (name) => {
      const outcome = await run(name);
      const verdict = outcome.code === 0 ? 'passed' : `FAILED (exit ${outcome.code})`;
      process.stdout.write(`\n> ${name}: ${verdict} in ${outcome.seconds.toFixed(1)} s\n${outcome.output.trimEnd()}\n`);
      return outcome;
    }),
  );
  const failed = outcomes.filter((outcome) => outcome.code !== 0).map((outcome) => outcome.name);
  if (failed.length > 0) {
    process.stdout.write(`\nfailed: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  }
}

void main();
