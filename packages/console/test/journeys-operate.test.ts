import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleServer,
  eventually,
  launchBrowser,
  missingBrowser,
  openPage,
  startConsoleServer,
} from './browser.js';
import { DECISION, WAITING } from './fixtures.js';

const missing = missingBrowser();

describe.skipIf(missing !== null)('console journeys: operating', () => {
  let t: ConsoleServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    for (const yaml of [WAITING, DECISION])
      expect((await t.call('POST', '/v1/definitions', yaml)).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('filters and pages the runs table on the server, and a bulk cancel shows its dry-run count first', async () => {
    const batch = await t.call('POST', '/v1/runs/batch', {
      definition: 'waiting',
      inputs: Array.from({ length: 60 }, (_, i) => ({ i })),
    });
    expect(batch.status).toBe(201);
    const other = await t.call('POST', '/v1/runs', { definition: 'decision' });
    const { page, context, errors } = await openPage(browser);
    await page.goto(`${t.url}/runs`);
    const rows = page.locator('table.grid tbody tr');
    await eventually(() => rows.count()).toBe(50);
    await page.getByRole('button', { name: 'Older →' }).click();
    await eventually(() => rows.count()).toBe(11);
    await page.getByRole('button', { name: '← Newer' }).click();
    await eventually(() => rows.count()).toBe(50);
    // A run by the start of its id.
    await page.getByLabel('Run id').fill(other.body.id.slice(0, 23));
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await eventually(() => rows.count()).toBe(1);
    expect(page.url()).toContain('run_id=');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Definition').selectOption('waiting');
    await page.getByLabel('Status').selectOption('running');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await eventually(() => rows.count()).toBe(50);
    await page.getByRole('button', { name: 'Cancel…' }).click();
    const dialog = page.getByRole('dialog', { name: /cancel matching runs/ });
    await eventually(() => dialog.locator('.dry-run').textContent()).toContain('60 run(s) match');
    expect(await dialog.textContent()).toContain('Nothing has been done yet');
    expect((await t.call('GET', '/v1/runs/count?definition=waiting&status=cancelled')).body.count).toBe(0);
    await dialog.getByLabel(/Reason/).fill('the warehouse closed');
    await dialog.getByRole('button', { name: 'cancel 60 run(s)' }).click();
    await eventually(() => dialog.textContent()).toContain('Finished: 60 done, 0 refused');
    expect((await t.call('GET', '/v1/runs/count?definition=waiting&status=cancelled')).body.count).toBe(60);
    expect((await t.call('GET', `/v1/runs/${other.body.id}`)).body.status).toBe('running');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('terminates matching runs in bulk only with a reason, then retries them in bulk', async () => {
    const bulky = WAITING.replace('name: waiting', 'name: bulky');
    expect((await t.call('POST', '/v1/definitions', bulky)).status).toBe(201);
    const batch = await t.call('POST', '/v1/runs/batch', {
      definition: 'bulky',
      inputs: Array.from({ length: 5 }, (_, i) => ({ i })),
    });
    expect(batch.status).toBe(201);
    const count = async (status: string) =>
      (await t.call('GET', `/v1/runs/count?definition=bulky&status=${status}`)).body.count;
    const { page, context, errors } = await openPage(browser);
    await page.goto(`${t.url}/runs?definition=bulky&status=running`);
    await eventually(() => page.locator('table.grid tbody tr').count()).toBe(5);
    await page.getByRole('button', { name: 'Terminate…' }).click();
    const terminate = page.getByRole('dialog', { name: /terminate matching runs/ });
    await eventually(() => terminate.locator('.dry-run').textContent()).toContain('5 run(s) match');
    const confirmTerminate = terminate.getByRole('button', { name: 'terminate 5 run(s)' });
    expect(await confirmTerminate.isDisabled()).toBe(true);
    await terminate.getByLabel(/Reason/).fill('the supplier went bust');
    await confirmTerminate.click();
    await eventually(() => terminate.textContent()).toContain('Finished: 5 done, 0 refused');
    expect(await count('terminated')).toBe(5);
    await terminate.getByRole('button', { name: 'Close', exact: true }).last().click();
    await page.getByLabel('Status').selectOption('terminated');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('button', { name: 'Retry…' }).click();
    const retry = page.getByRole('dialog', { name: /retry matching runs/ });
    await eventually(() => retry.locator('.dry-run').textContent()).toContain('5 run(s) match');
    expect(await count('running')).toBe(0);
    await retry.getByRole('button', { name: 'retry 5 run(s)' }).click();
    await eventually(() => retry.textContent()).toContain('Finished: 5 done, 0 refused');
    expect(await count('running')).toBe(5);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('sends a signal from the run page, and shows a refused report marked in the timeline', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'decision' });
    // Other tests left tasks of this type queued: take them all, and answer this run's.
    const poll = await t.call('POST', '/v1/tasks/poll', {
      worker: 'careful',
      task_types: ['shop.ask'],
      max: 50,
      wait_ms: 5000,
    });
    const task = poll.body.tasks.find((x: { run_id: string }) => x.run_id === run.body.id);
    expect(task).toBeDefined();
    // A report with a forged token is refused, and the refusal is kept in the run's history.
    const forged = await t.call('POST', `/v1/tasks/${task.task_id}/complete`, {
      run_id: run.body.id,
      attempt: 1,
      lease_token: '00000000-0000-4000-8000-000000000000',
      output: {},
    });
    expect(forged.status).toBe(409);
    const report = await t.call('POST', '/v1/tasks/report', {
      worker: 'careful',
      reports: [
        {
          run_id: run.body.id,
          task_id: task.task_id,
          attempt: 1,
          lease_token: task.lease_token,
          output: { asked: true },
        },
      ],
    });
    expect(report.body.results, JSON.stringify(report.body)).toEqual([
      { task_id: task.task_id, accepted: true },
    ]);
    const { page, context, errors } = await openPage(browser);
    await page.goto(`${t.url}/runs/${run.body.id}`);
    const refused = page.locator('.timeline tr.refusal');
    await refused.first().waitFor();
    expect(await refused.count()).toBe(1);
    expect(await refused.textContent()).toContain('task.report_refused');
    await eventually(() =>
      page.locator('.react-flow__node[data-id="decide"]').getAttribute('aria-label'),
    ).toContain('running');
    const form = page.getByRole('form', { name: 'Send a signal' });
    await form.getByLabel('Data (JSON)').fill('{"approved": true, "by": "ann"}');
    await form.getByRole('button', { name: 'Send signal' }).click();
    await form.getByRole('status').filter({ hasText: 'Signal delivered to decide' }).waitFor();
    await eventually(() => page.locator('#run-title .badge').textContent()).toBe('completed');
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.output).toEqual({
      decide: { approved: true, by: 'ann' },
    });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('shows schedules with their next fire times, pauses and resumes one; limits and the quota with their use; workers seen', async () => {
    await t.call('PUT', '/v1/schedules/hourly-check', { definition: 'waiting', cron: '0 * * * *' });
    await t.call('PUT', '/v1/limits/semaphore/printer', { max: 3 });
    await t.call('PUT', '/v1/limits/quota', { max: 1000 });
    await t.call('POST', '/v1/runs', { definition: 'waiting' });
    await t.call('POST', '/v1/tasks/poll', {
      worker: 'label-printer-7',
      task_types: ['labels.print'],
      max: 1,
      wait_ms: 0,
    });
    const { page, context, errors } = await openPage(browser);
    await page.goto(`${t.url}/schedules`);
    const row = page.getByRole('row').filter({ hasText: 'hourly-check' });
    await eventually(() => row.locator('li').count()).toBe(3);
    await row.getByRole('button', { name: 'Pause hourly-check' }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /Confirm/ })
      .click();
    await eventually(() => row.textContent()).toContain('none while paused');
    expect((await t.call('GET', '/v1/schedules/hourly-check')).body.paused).toBe(true);
    await row.getByRole('button', { name: 'Resume hourly-check' }).click();
    await page
      .getByRole('dialog', { name: 'Resume schedule hourly-check' })
      .getByRole('button', { name: /Confirm/ })
      .click();
    await eventually(() => row.locator('li').count()).toBe(3);
    expect((await t.call('GET', '/v1/schedules/hourly-check')).body.paused).toBe(false);
    await page.getByRole('link', { name: 'Limits' }).click();
    await eventually(() => page.getByRole('row').filter({ hasText: 'printer' }).textContent()).toContain(
      '0 / 3',
    );
    // The quota counts the runs running now: at least the one waiting below.
    const running = (await t.call('GET', '/v1/runs/count?status=running')).body.count;
    expect(running).toBeGreaterThan(0);
    await eventually(() => page.getByRole('row').filter({ hasText: 'Quota' }).textContent()).toContain(
      `${running} / 1000`,
    );
    await page.getByRole('link', { name: 'Workers' }).click();
    await eventually(() =>
      page.getByRole('row').filter({ hasText: 'label-printer-7' }).textContent(),
    ).toContain('labels.print');
    expect(errors).toEqual([]);
    await context.close();
  });
});
