/**
 * Writes the HTML references of the three documents (git-ignored): the API into docs/index.html,
 * the Portal (what a customer's browser calls) into docs/portal.html, the operating interface
 * (probes and metrics, what an operator's tools call) into docs/operate.html. Each is one file, with
 * Redoc's scripts inlined, that opens in a browser with no network and asks no other host for
 * anything (test/docs/docs.test.ts). Usage reports are off in redocly.yaml (`telemetry: off`);
 * the one thing Redoc cannot be told to stop is its attribution logo, fetched from Redocly's
 * CDN, so the logo's address is replaced by the same words drawn inline (a data: URI).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..');
const REFERENCES = [
  { document: 'openapi.json', output: 'index.html', title: 'Debt Collection Service API' },
  { document: 'portal.json', output: 'portal.html', title: 'Debt Collection Service Portal' },
  { document: 'operate.json', output: 'operate.html', title: 'Debt Collection Service Operations' },
];

const LOGO_URLS = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const inlineLogo = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="56" height="14" viewBox="0 0 56 14">' +
    '<text x="0" y="11" font-family="sans-serif" font-size="11" fill="#555">Redocly</text></svg>',
)}`;

for (const { document, output: name, title } of REFERENCES) {
  const output = join(root, 'docs', name);
  execFileSync(
    join(root, 'node_modules', '.bin', 'redocly'),
    ['build-docs', join(root, 'generated', document), '--output', output, '--inlineBundle', '--title', title],
    { cwd: root, stdio: 'inherit' },
  );
  let html = readFileSync(output, 'utf8');
  for (const url of LOGO_URLS) {
    if (!html.includes(url)) throw new Error(`The docs no longer name ${url}: check what the renderer fetches now (test/docs/docs.test.ts).`);
    html = html.split(url).join(inlineLogo);
  }
  writeFileSync(output, html);
  console.log(`docs written to ${output}`);
}
