/**
 * Every log line of a piece of work names it: a request's lines their request id, organization
 * and environment (once authenticated); a job's lines its job id, queue, and the organization and
 * environment its data names; with traces off, no trace field and no trace context in a job.
 */
import { enqueueIn } from '../../server/jobs/queue';
import { runAsWork, workIsFor } from '../../server/observability/work-context';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually } from '../support/webhooks';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const lines = () => app.logs.map((text) => JSON.parse(text) as Record<string, unknown>);

test('a line written inside a request\'s work carries its request id, and its tenant once known', () => {
  runAsWork({ requestId: 'req-ctx-1' }, () => {
    app.deps.logger.info('before authentication');
    workIsFor(app.organization.organization_id, 'sandbox');
    app.deps.logger.info('after authentication');
  });
  app.deps.logger.info('outside any work');
  const [before, after, outside] = ['before authentication', 'after authentication', 'outside any work'].map((msg) => lines().find((line) => line.msg === msg)!);
  expect(before).toMatchObject({ request_id: 'req-ctx-1' });
  expect(before).not.toHaveProperty('organization_id');
  expect(after).toMatchObject({ request_id: 'req-ctx-1', organization_id: app.organization.organization_id, environment: 'sandbox' });
  expect(outside).not.toHaveProperty('request_id');
  expect(outside).not.toHaveProperty('trace_id');
});

test('a job\'s lines carry its job id, queue, organization and environment', async () => {
  const queue = 'log-context-check';
  await app.boss.createQueue(queue);
  const seen: string[] = [];
  await app.boss.work<{ organizationId: string; environment: string }>(queue, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
    app.deps.logger.info({ step: 'inside' }, 'job line');
    seen.push(job!.id);
  });
  await app.db.transaction((trx) => enqueueIn(app.boss, trx, queue as never, { organizationId: app.organization.organization_id, environment: 'production' }));
  const jobId = await eventually(() => seen[0], 'the job run');
  const line = lines().find((entry) => entry.msg === 'job line')!;
  expect(line).toMatchObject({ job_id: jobId, queue, organization_id: app.organization.organization_id, environment: 'production' });
  expect(line).not.toHaveProperty('trace_id');
  const { data } = (await app.db.raw('SELECT data FROM pgboss.job WHERE id = ?', [jobId])).rows[0] as { data: Record<string, unknown> };
  expect(data).toEqual({ organizationId: app.organization.organization_id, environment: 'production' });
});
