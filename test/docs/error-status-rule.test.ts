/**
 * The lint rule that keeps every operation listing the shared error statuses
 * (openapi/plugins/error-statuses.js), run by the same CLI as `npm run lint:spec` on a throwaway
 * document: one that omits a status fails, naming the operation and the status; the same with
 * every status passes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(__dirname, '../..');
const redocly = join(root, 'node_modules/.bin/redocly');

const shared = ['400', '401', '404', '413', '415', '422', '429', '500'];

function documentListing(statuses: string[]): string {
  const responses = ['200', ...statuses].map((status) => `        '${status}':\n          description: Status ${status}.`).join('\n');
  return `openapi: 3.1.0
info:
  title: Throwaway
  version: 1.0.0
  license: {name: MIT, url: https://opensource.org/licenses/MIT}
servers: [{url: 'https://example.com/api/v1'}]
security: [{bearer: []}]
components:
  securitySchemes:
    bearer: {type: http, scheme: bearer}
paths:
  /things/{id}:
    put:
      operationId: updateThing
      summary: Update a thing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {type: object}
      responses:
${responses}
`;
}

async function lint(statuses: string[]): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'error-status-rule-'));
  try {
    writeFileSync(join(dir, 'openapi.yaml'), documentListing(statuses));
    writeFileSync(
      join(dir, 'redocly.yaml'),
      `apis:\n  main:\n    root: openapi.yaml\n    rules:\n      errors/shared-error-statuses: error\nplugins:\n  - ${join(root, 'openapi/plugins/error-statuses.js')}\ntelemetry: off\n`,
    );
    try {
      const { stdout, stderr } = await run(redocly, ['lint', '--format=stylish'], { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the shared-error-statuses lint rule', () => {
  test('fails a document whose operation omits 415 and 429, naming both', async () => {
    const { code, output } = await lint(shared.filter((status) => status !== '415' && status !== '429'));
    expect(code).not.toBe(0);
    expect(output).toContain('updateThing does not list 415, 429');
  });

  test('passes the same document with every shared status', async () => {
    const { code, output } = await lint(shared);
    expect(output).not.toContain('shared-error-statuses');
    expect(code).toBe(0);
  });
});
