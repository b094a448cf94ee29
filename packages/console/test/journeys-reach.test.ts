import { TEST_ADMIN_KEY } from '@weft/testing';
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
import { AUDITED, LEAF, NESTED, ORDER, WAITING } from './fixtures.js';

const missing = missingBrowser();

/** Waits (at most 30 s) until `check` gives something. */
async function until<T>(check: () => Promise<T | null | undefined | false>): Promise<T> {
  const end = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Deploys `yaml` in `namespace` and starts a run of it there; gives the run's id. */
async function startElsewhere(t: ConsoleServer, namespace: string, yaml: string): Promise<string> {
  const headers = { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'x-weft-namespace': namespace };
  const deployed = await fetch(`${t.url}/v1/definitions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body: yaml,
  });
  expect(deployed.status).toBe(201);
  const started = await fetch(`${t.url}/v1/runs`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ definition: 'waiting' }),
  });
  return ((await started.json()) as { id: string }).id;
}

const node = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);

/** The YAML of a file the browser uploads. */
const yamlFile = (name: string, text: string) => ({
  name,
  mimeType: 'application/yaml',
  buffer: Buffer.from(text),
});

describe.skipIf(missing !== null)('console journeys: reaching into runs, versions and the outbox', () => {
  let t: ConsoleServer;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    for (const yaml of [LEAF, NESTED, AUDITED])
      expect((await t.call('POST', '/v1/definitions', yaml)).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    expect(errors).toEqual([]);
  });

  it("opens a loop's passes, a map's items and the child run from the run page", async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'nested' });
    await until(async () => (await t.call('GET', `/v1/runs/${run.body.id}`)).body.status === 'completed');
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs/${run.body.id}`);
    await eventually(() => node(page, 'poll').getAttribute('aria-label')).toContain('3 passes');
    expect(await node(page, 'each').getAttribute('aria-label')).toContain('3 items');
    // A loop pass: its body's node at that pass, with the pass's own output.
    await node(page, 'poll').click();
    const passes = page.getByRole('group', { name: /Passes of poll/ });
    expect(await passes.getByRole('button').allTextContents()).toEqual(['0', '1', '2']);
    await passes.getByRole('button', { name: '2' }).click();
    const level = page.getByRole('navigation', { name: 'Graph level' });
    await level.getByRole('button', { name: 'poll[2]' }).waitFor();
    await node(page, 'check').click();
    const panel = page.getByRole('region', { name: /Node check\[2\]/ });
    await eventually(() => panel.getByRole('figure', { name: 'Output of check[2]' }).textContent()).toContain(
      'pass:2',
    );
    // A map item, reached from the top level again.
    await level.getByRole('button', { name: 'nested' }).click();
    await node(page, 'each').click();
    const items = page.getByRole('group', { name: /Items of each/ });
    expect(await items.getByRole('button').count()).toBe(3);
    await items.getByRole('button', { name: '1' }).click();
    await node(page, 'price').click();
    await eventually(() => page.getByRole('figure', { name: 'Output of price[1]' }).textContent()).toContain(
      '"b"',
    );
    // The child run, and back to its parent.
    await level.getByRole('button', { name: 'nested' }).click();
    await node(page, 'child').click();
    const childLink = page.getByRole('region', { name: /Node child/ }).getByRole('link');
    await childLink.click();
    await page.waitForURL((url) => !url.pathname.endsWith(run.body.id));
    const childId = page.url().split('/').pop()!;
    expect((await t.call('GET', `/v1/runs/${childId}`)).body.parent.run_id).toBe(run.body.id);
    await eventually(() => page.locator('#run-title .badge').textContent()).toBe('completed');
    await eventually(() => node(page, 'answer').getAttribute('aria-label')).toContain('completed');
    await page
      .locator('.facts')
      .getByRole('link', { name: run.body.id.slice(0, 8) })
      .click();
    await page.waitForURL(`**/runs/${run.body.id}`);
    await node(page, 'poll').waitFor();
    errors.push(...pageErrors);
    await context.close();
  });

  it("shows a node's output kept in the blob store, resolved, in its JSON viewer", async () => {
    const copy = 'name: copy\nnodes:\n  - { id: copy, kind: transform, value: { text: input.text } }\n';
    expect((await t.call('POST', '/v1/definitions', copy)).status).toBe(201);
    // Over the 256 KB threshold: PostgreSQL keeps a reference, the blob store the value.
    const text = `${'x'.repeat(300_000)}-END-OF-TEXT`;
    const run = await t.call('POST', '/v1/runs', { definition: 'copy', input: { text } });
    await until(async () => (await t.call('GET', `/v1/runs/${run.body.id}`)).body.status === 'completed');
    const [stored] = await t.db.sql<{ input: string }[]>`
      SELECT input::text AS input FROM weft.runs WHERE id = ${run.body.id}::uuid`;
    expect(stored!.input).toContain('$weft_blob');
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs/${run.body.id}`);
    await node(page, 'copy').click();
    await eventually(async () =>
      ((await page.getByRole('figure', { name: 'Output of copy' }).textContent()) ?? '').slice(-40),
    ).toContain('-END-OF-TEXT');
    errors.push(...pageErrors);
    await context.close();
  });

  it('deploys by uploading a file: a mistake shown at its line, then a second version, its diff and versions', async () => {
    expect((await t.call('POST', '/v1/definitions', ORDER)).status).toBe(201);
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/deploy`);
    const file = page.getByLabel('Load a YAML file');
    const broken = ORDER.replace('{ from: charge, to: ship }', '{ from: charge, to: shipp }');
    await file.setInputFiles(yamlFile('order.yaml', broken));
    await eventually(() => page.locator('.cm-content').textContent()).toContain('to: shipp');
    await page.getByRole('button', { name: 'Deploy' }).click();
    const problems = page.getByRole('alert').filter({ hasText: 'problem' });
    const line = broken.split('\n').findIndex((l) => l.includes('shipp')) + 1;
    await problems.getByRole('button', { name: `line ${line}` }).waitFor();
    expect(await problems.textContent()).toContain('shipp');
    await eventually(() => page.locator('.cm-lintRange-error').textContent()).toContain('shipp');
    expect((await t.call('GET', '/v1/definitions/order')).body.versions).toHaveLength(1);
    // The fixed file, with a gift-wrap step: version 2.
    const second = ORDER.replace(
      '  - { id: ship, task_type: shop.ship }',
      '  - { id: ship, task_type: shop.ship }\n  - { id: wrap, task_type: shop.wrap }',
    ).replace(
      '  - { from: notify, to: ship }',
      '  - { from: notify, to: ship }\n  - { from: ship, to: wrap }',
    );
    await file.setInputFiles(yamlFile('order-v2.yaml', second));
    await eventually(() => page.locator('.cm-content').textContent()).toContain('shop.wrap');
    await page.getByRole('button', { name: 'Deploy' }).click();
    await page.waitForURL(/\/definitions\/order\?version=2$/);
    await node(page, 'wrap').waitFor();
    const diff = page.getByRole('region', { name: /Changes from/ });
    await eventually(() => diff.locator('.diff-added').allTextContents()).toEqual([
      // Screen readers hear what each marked block is.
      'Added lines:+   - { id: wrap, task_type: shop.wrap }\n',
      'Added lines:+   - { from: ship, to: wrap }\n',
    ]);
    expect(await diff.locator('.diff-removed').count()).toBe(0);
    // Version 1: its YAML and graph, without the new step; the diff now reads from v2 to v1.
    await page.getByRole('combobox', { name: /^Version/ }).selectOption('1');
    await page.waitForURL(/version=1$/);
    await eventually(() => node(page, 'wrap').count()).toBe(0);
    await eventually(() => diff.locator('.diff-removed').count()).toBe(2);
    expect(await diff.getByRole('combobox').inputValue()).toBe('2');
    await page.getByRole('link', { name: 'Definitions' }).first().click();
    await eventually(() =>
      page.getByRole('row').filter({ hasText: 'order' }).first().textContent(),
    ).toContain('v2');
    errors.push(...pageErrors);
    await context.close();
  });

  it('filters runs by version, idempotency key and start time, and follows the namespace picked', async () => {
    expect((await t.call('POST', '/v1/definitions', WAITING)).status).toBe(201);
    const v2 = WAITING.replace('duration: 1h', 'duration: 2h');
    expect((await t.call('POST', '/v1/definitions', v2)).body.version).toBe(2);
    const first = await t.call('POST', '/v1/runs', { definition: 'waiting', version: 1 });
    const keyed = await t.call('POST', '/v1/runs', { definition: 'waiting', idempotency_key: 'order-A-77' });
    await t.call('POST', '/v1/runs', { definition: 'waiting' });
    const elsewhere = await startElsewhere(t, 'shipping', WAITING);
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs`);
    const filters = page.getByRole('form', { name: 'Filter runs' });
    const rows = page.locator('table.grid tbody tr');
    const apply = () => filters.getByRole('button', { name: 'Apply filters' }).click();
    const shown = async () =>
      page.locator('table.grid tbody tr a[title]').evaluateAll((as) => as.map((a) => a.title));
    await filters.getByLabel('Definition').selectOption('waiting');
    await filters.getByLabel('Version').fill('1');
    await apply();
    await eventually(shown).toEqual([first.body.id]);
    await filters.getByRole('button', { name: 'Clear' }).click();
    await filters.getByLabel('Idempotency key').fill('order-A-77');
    await apply();
    await eventually(shown).toEqual([keyed.body.id]);
    expect(page.url()).toContain('idempotency_key=order-A-77');
    await filters.getByRole('button', { name: 'Clear' }).click();
    // A start-time range: before a minute ago holds none of these runs; after it holds all three.
    const minuteAgo = await page.evaluate((ms) => {
      const d = new Date(ms);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
    }, Date.now() - 60_000);
    await filters.getByLabel('Definition').selectOption('waiting');
    await filters.getByLabel('Started before').fill(minuteAgo);
    await apply();
    await eventually(() => rows.count()).toBe(0);
    await filters.getByLabel('Started before').fill('');
    await filters.getByLabel('Started after').fill(minuteAgo);
    await apply();
    await eventually(() => rows.count()).toBe(3);
    expect(page.url()).toContain('started_after=');
    // Another namespace: only its runs.
    await filters.getByRole('button', { name: 'Clear' }).click();
    const namespace = page.getByRole('combobox', { name: 'Namespace' });
    await namespace.fill('shipping');
    await namespace.press('Enter');
    await eventually(shown).toEqual([elsewhere]);
    errors.push(...pageErrors);
    await context.close();
  });

  it('replays every dead letter at once once the destination is back', async () => {
    t.receiver.accept = false;
    for (const order of ['B-1', 'B-2', 'B-3'])
      await t.call('POST', '/v1/runs', { definition: 'audited', input: { order } });
    await until(async () => (await t.call('GET', '/v1/dead-letters')).body.items.length === 3);
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/outbox`);
    await eventually(() => page.getByRole('button', { name: /^Replay \d+$/ }).count()).toBe(3);
    t.receiver.accept = true;
    await page.getByRole('button', { name: 'Replay all' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay every dead letter' });
    await dialog.getByLabel(/Reason/).fill('the audit service is back');
    await dialog.getByRole('button', { name: 'Confirm: Replay all' }).click();
    await until(async () => t.receiver.received.length === 3);
    expect(t.receiver.received.map((m: any) => m.data.order).sort()).toEqual(['B-1', 'B-2', 'B-3']);
    await page.getByText('No dead letter.').waitFor();
    expect((await t.call('GET', '/v1/dead-letters')).body.items).toEqual([]);
    errors.push(...pageErrors);
    await context.close();
  });
});
