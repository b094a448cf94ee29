import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleServer,
  eventually,
  launchBrowser,
  missingBrowser,
  openPage,
  startConsoleServer,
} from './browser.js';
import { ORDER, shopWorker, WAITING } from './fixtures.js';

const missing = missingBrowser();
if (missing) console.warn(`skipping the console's browser tests: ${missing}`);

/** Waits (at most 30 s) until the API says the run has this status. */
async function runReaches(t: ConsoleServer, id: string, status: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    if ((await t.call('GET', `/v1/runs/${id}`)).body.status === status) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${id} did not reach ${status}`);
}

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
const runStatus = (page: Page) => page.locator('#run-title .badge');

describe.skipIf(missing !== null)('console journeys: runs', () => {
  let t: ConsoleServer;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    expect((await t.call('POST', '/v1/definitions', ORDER)).status).toBe(201);
    expect((await t.call('POST', '/v1/definitions', WAITING)).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    expect(errors).toEqual([]);
  });

  it('starts a run from its definition and watches it complete live, in the run page and the runs table', async () => {
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/definitions/order`);
    await page.getByRole('button', { name: 'Start a run' }).click();
    await page.getByLabel('Input (JSON)').fill('{"amount": 42}');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const runId = page.url().split('/').pop()!;
    await eventually(() => runStatus(page).textContent()).toBe('running');
    await eventually(() => node(page, 'reserve').getAttribute('aria-label')).toContain('queued');
    await eventually(() => page.locator('.stream').textContent()).toContain('live');
    // The runs table, open beside it, shows the run running.
    const table = await context.newPage();
    await table.goto(`${t.url}/runs`);
    const row = table.getByRole('row').filter({ has: table.locator(`a[title="${runId}"]`) });
    await eventually(() => row.locator('.badge').textContent()).toBe('running');
    // Nothing is reloaded from here on: a marker set now must survive.
    await page.evaluate('window.stillHere = true');
    const { worker, open } = shopWorker(t.url);
    await worker.start();
    open();
    try {
      await eventually(() => runStatus(page).textContent()).toBe('completed');
      for (const id of ['reserve', 'charge', 'notify', 'ship'])
        expect(await node(page, id).getAttribute('aria-label')).toContain('completed');
      await eventually(() => page.locator('.timeline').textContent()).toContain('run.completed');
      expect(await page.evaluate('window.stillHere')).toBe(true);
      await eventually(() => row.locator('.badge').textContent()).toBe('completed');
      // A node's attempts name the worker that ran them; its input and output are shown as JSON. The run
      // page is brought to the front first: with the runs table's page in front, Chromium may not lay out
      // the run page's graph (its nodes stay hidden until measured), and a click waits for visibility.
      await page.bringToFront();
      await node(page, 'charge').click();
      const attempts = page.getByRole('table', { name: 'Attempts' });
      await eventually(() => attempts.textContent()).toContain('console-test-worker');
      expect(await page.getByRole('figure', { name: 'Input of charge' }).textContent()).toContain(
        'amount:42',
      );
    } finally {
      await worker.stop();
    }
    errors.push(...pageErrors);
    await context.close();
  });

  it('pauses and resumes a run, each with a confirmation and a reason kept in its history', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'waiting' });
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs/${run.body.id}`);
    await eventually(() => node(page, 'hold').getAttribute('aria-label')).toContain('running');
    await page.getByRole('button', { name: 'Pause' }).click();
    const dialog = page.getByRole('dialog', { name: 'Pause this run' });
    await dialog.getByLabel(/Reason/).fill('deploying the warehouse fix');
    await dialog.getByRole('button', { name: 'Confirm: Pause' }).click();
    await eventually(() => runStatus(page).textContent()).toBe('paused');
    await eventually(() => page.locator('.timeline').textContent()).toContain('run.paused');
    expect(await page.locator('.timeline').textContent()).toContain('deploying the warehouse fix');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page
      .getByRole('dialog', { name: 'Resume this run' })
      .getByRole('button', { name: 'Confirm: Resume' })
      .click();
    await eventually(() => runStatus(page).textContent()).toBe('running');
    await eventually(() => page.locator('.timeline').textContent()).toContain('run.resumed');
    expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.status).toBe('running');
    errors.push(...pageErrors);
    await context.close();
  });

  it('reruns a finished run from a node chosen on the graph', async () => {
    const { worker, open } = shopWorker(t.url);
    open();
    await worker.start();
    try {
      const run = await t.call('POST', '/v1/runs', { definition: 'order', input: { amount: 7 } });
      await runReaches(t, run.body.id, 'completed');
      const { page, context, errors: pageErrors } = await openPage(browser);
      await page.goto(`${t.url}/runs/${run.body.id}`);
      await node(page, 'charge').click();
      await page.getByRole('heading', { name: /Node charge/ }).waitFor();
      await page.getByRole('button', { name: 'Rerun from here' }).click();
      const dialog = page.getByRole('dialog', { name: 'Rerun from charge' });
      await dialog.getByLabel(/Reason/).fill('the charge used a stale rate');
      await dialog.getByRole('button', { name: 'Confirm: Rerun from here' }).click();
      await eventually(() => page.locator('.timeline').textContent()).toContain('run.rerun');
      await eventually(() => runStatus(page).textContent()).toBe('completed');
      // charge ran twice; reserve, before it, kept its single attempt.
      await eventually(() => node(page, 'charge').getAttribute('aria-label')).toContain('2 attempts');
      expect(await node(page, 'reserve').getAttribute('aria-label')).not.toContain('attempts');
      errors.push(...pageErrors);
      await context.close();
    } finally {
      await worker.stop();
    }
  });

  it('follows the history after a dropped connection: resumes from the last event, none missed or repeated', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'waiting' });
    const first = (await t.call('GET', `/v1/runs/${run.body.id}/history`)).body.events;
    expect(first.length).toBeGreaterThanOrEqual(2);
    const { page, context, errors: pageErrors } = await openPage(browser);
    const resumedFrom: (string | undefined)[] = [];
    let calls = 0;
    await page.route('**/v1/runs/*/events', async (route) => {
      calls++;
      if (calls === 1) {
        // The first connection gives the first event, then drops.
        const body = `retry: 200\n\nid: ${first[0].seq}\ndata: ${JSON.stringify(first[0])}\n\n`;
        await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body });
        return;
      }
      resumedFrom.push(route.request().headers()['last-event-id']);
      await route.continue();
    });
    await page.goto(`${t.url}/runs/${run.body.id}`);
    await page
      .locator('.timeline tbody tr')
      .nth(first.length - 1)
      .waitFor();
    expect(await page.locator('.timeline tbody tr').count()).toBe(first.length);
    await t.call('POST', `/v1/runs/${run.body.id}/cancel`, { reason: 'checking the stream' });
    await eventually(() => page.locator('.timeline').textContent()).toContain('checking the stream');
    expect(resumedFrom[0]).toBe(String(first[0].seq));
    const seqs = await page.locator('.timeline tbody tr td:first-child').allTextContents();
    const all = (await t.call('GET', `/v1/runs/${run.body.id}/history`)).body.events.map((e: any) =>
      String(e.seq),
    );
    expect(seqs).toEqual(all);
    errors.push(...pageErrors);
    await context.close();
  });
});
