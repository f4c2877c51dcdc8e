/**
 * Writes the HTML reference of the API into docs/index.html (git-ignored): one file, with
 * Redoc's scripts inlined, so it opens in a browser with no network.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..');
const output = join(root, 'docs', 'index.html');

execFileSync(
  join(root, 'node_modules', '.bin', 'redocly'),
  ['build-docs', join(root, 'generated', 'openapi.json'), '--output', output, '--inlineBundle', '--title', 'Debt Collection Service API'],
  { cwd: root, stdio: 'inherit' },
);
console.log(`docs written to ${output}`);
