import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleServer,
  eventually,
  launchBrowser,
  missingBrowser,
  openPage,
  startConsoleServer,
} from './browser.js';
import { ORDER, WAITING } from './fixtures.js';

// Every operator action of the run page, each through its button, its confirmation and a reason that the
// run's history keeps. No worker runs here: tasks stay queued until an operator finishes them by hand.

const missing = missingBrowser();

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
const runStatus = (page: Page) => page.locator('#run-title .badge');

/** Clicks the action `label`, gives the reason in its dialog `title`, and confirms. */
async function act(
  page: Page,
  label: string,
  title: string,
  reason: string,
  fill?: (d: Locator) => Promise<void>,
) {
  await page.getByRole('button', { name: label, exact: true }).click();
  const dialog = page.getByRole('dialog', { name: title });
  await fill?.(dialog);
  await dialog.getByLabel(/Reason/).fill(reason);
  await dialog.getByRole('button', { name: `Confirm: ${label}` }).click();
  await eventually(() => page.getByRole('dialog').count()).toBe(0);
}

/** Chooses a node on the graph and waits for its panel. */
async function choose(page: Page, id: string) {
  await node(page, id).click();
  await page.getByRole('heading', { name: new RegExp(`Node ${id}`) }).waitFor();
}

describe.skipIf(missing !== null)('console journeys: every operator action', () => {
  let t: ConsoleServer;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    for (const yaml of [ORDER, WAITING])
      expect((await t.call('POST', '/v1/definitions', yaml)).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    expect(errors).toEqual([]);
  });

  it('skips, completes and fails nodes by hand, retries the failed run, then cancels it', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'order', input: { amount: 5 } });
    const id = run.body.id;
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs/${id}`);
    await eventually(() => node(page, 'reserve').getAttribute('aria-label')).toContain('queued');
    const timeline = page.locator('.timeline');

    await choose(page, 'reserve');
    await act(page, 'Skip', 'Skip reserve', 'stock is reserved by the warehouse');
    await eventually(() => node(page, 'reserve').getAttribute('aria-label')).toContain('skipped');
    await eventually(() => node(page, 'charge').getAttribute('aria-label')).toContain('queued');

    await choose(page, 'charge');
    await act(page, 'Complete', 'Complete charge by hand', 'charged at the till', (d) =>
      d.getByLabel('Output (JSON)').fill('{"charged": 5, "till": 3}'),
    );
    await eventually(() => node(page, 'charge').getAttribute('aria-label')).toContain('completed');
    await eventually(() => page.getByRole('figure', { name: 'Output of charge' }).textContent()).toContain(
      'till:3',
    );

    await choose(page, 'notify');
    await act(page, 'Fail', 'Fail notify by hand', 'the customer asked for no mail', (d) =>
      d.getByLabel('Error message').fill('mail refused'),
    );
    await eventually(() => runStatus(page).textContent()).toBe('failed');
    await eventually(() => timeline.textContent()).toContain('the customer asked for no mail');
    for (const reason of ['stock is reserved by the warehouse', 'charged at the till'])
      expect(await timeline.textContent()).toContain(reason);
    expect(await page.getByRole('figure', { name: 'Error of notify' }).textContent()).toContain(
      'mail refused',
    );

    // A failed run: retry runs the failed node again as a second attempt; charge keeps its output.
    await act(page, 'Retry', 'Retry this run', 'mail is allowed again');
    await eventually(() => runStatus(page).textContent()).toBe('running');
    await eventually(() => node(page, 'notify').getAttribute('aria-label')).toContain('2 attempts');
    expect(await node(page, 'charge').getAttribute('aria-label')).not.toContain('attempts');

    await act(page, 'Cancel', 'Cancel this run', 'the order was withdrawn');
    await eventually(() => runStatus(page).textContent()).toBe('cancelled');
    await eventually(() => timeline.textContent()).toContain('the order was withdrawn');
    const history = (await t.call('GET', `/v1/runs/${id}/history`)).body.events.map((e: any) => e.type);
    expect(history).toEqual(expect.arrayContaining(['run.retried', 'run.cancelled']));
    errors.push(...pageErrors);
    await context.close();
  });

  it('terminates a run only with a reason; a dialog left open while the run ends shows the refusal', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'waiting' });
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs/${run.body.id}`);
    await eventually(() => node(page, 'hold').getAttribute('aria-label')).toContain('running');
    await page.getByRole('button', { name: 'Terminate', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Terminate this run' });
    const confirm = dialog.getByRole('button', { name: 'Confirm: Terminate' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(/Reason/).fill('the stock count is wrong');
    expect(await confirm.isDisabled()).toBe(false);
    // Another operator cancels the run meanwhile: the page follows it live, and the open dialog stays.
    await t.call('POST', `/v1/runs/${run.body.id}/cancel`, { reason: 'cancelled elsewhere' });
    await eventually(() => runStatus(page).textContent()).toBe('cancelled');
    expect(await page.getByRole('button', { name: 'Terminate', exact: true }).count()).toBe(0);
    expect(await dialog.getByLabel(/Reason/).inputValue()).toBe('the stock count is wrong');
    await confirm.click();
    await eventually(() => dialog.getByRole('alert').textContent()).toMatch(/cancelled/);
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await eventually(() => page.getByRole('dialog').count()).toBe(0);

    const second = await t.call('POST', '/v1/runs', { definition: 'waiting' });
    await page.goto(`${t.url}/runs/${second.body.id}`);
    await eventually(() => node(page, 'hold').getAttribute('aria-label')).toContain('running');
    await act(page, 'Terminate', 'Terminate this run', 'the stock count is wrong');
    await eventually(() => runStatus(page).textContent()).toBe('terminated');
    await eventually(() => page.locator('.timeline').textContent()).toContain('the stock count is wrong');
    expect((await t.call('GET', `/v1/runs/${second.body.id}/history`)).body.events.at(-1).type).toBe(
      'run.terminated',
    );
    errors.push(...pageErrors);
    await context.close();
  });
});
