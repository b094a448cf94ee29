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
import { APPROVAL, AUDITED, ORDER, shopWorker } from './fixtures.js';

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

/** Replaces the text of the CodeMirror editor labelled `label`. */
async function typeInEditor(page: Page, text: string): Promise<void> {
  await page.locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

describe.skipIf(missing !== null)('console journeys: people and machines', () => {
  let t: ConsoleServer;
  let browser: Browser;
  const errors: string[] = [];

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    for (const yaml of [ORDER, APPROVAL, AUDITED])
      expect((await t.call('POST', '/v1/definitions', yaml)).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    expect(errors).toEqual([]);
  });

  it('answers a human task: claim, a form from its JSON Schema checked as it is filled, submit', async () => {
    const { worker, open } = shopWorker(t.url);
    open();
    await worker.start();
    try {
      const run = await t.call('POST', '/v1/runs', { definition: 'refund-approval' });
      const { page, context, errors: pageErrors } = await openPage(browser);
      await page.goto(`${t.url}/inbox`);
      await page.getByRole('link', { name: 'Approve the refund' }).click();
      await page.getByLabel('Your name').fill('ann');
      await page.getByRole('button', { name: 'Claim' }).click();
      await page.getByRole('status').filter({ hasText: 'Claimed.' }).waitFor();
      await eventually(async () => (await t.call('GET', '/v1/inbox')).body.items[0]?.claimed_by).toBe('ann');
      // Too short a note: the form says so and sends nothing.
      await page.getByLabel('Note').fill('ok');
      await page.getByRole('button', { name: 'Submit answer' }).click();
      await page.getByText('must NOT have fewer than 3 characters').first().waitFor();
      expect((await t.call('GET', `/v1/runs/${run.body.id}`)).body.status).toBe('running');
      await page.getByLabel('Note').fill('refund agreed with the customer');
      await page.getByLabel('Approved').check();
      await page.getByRole('button', { name: 'Submit answer' }).click();
      await page.getByRole('status').filter({ hasText: 'Answer sent' }).waitFor();
      await until(async () => (await t.call('GET', `/v1/runs/${run.body.id}`)).body.status === 'completed');
      const task = (await t.call('GET', '/v1/inbox?state=completed')).body.items[0];
      expect(task).toMatchObject({
        completed_by: 'ann',
        data: { approved: true, note: 'refund agreed with the customer' },
      });
      errors.push(...pageErrors);
      await context.close();
    } finally {
      await worker.stop();
    }
  });

  it('inspects a dead letter and replays it once the destination is back', async () => {
    t.receiver.accept = false;
    await t.call('POST', '/v1/runs', { definition: 'audited', input: { order: 'A-17' } });
    const dead = await until(async () => (await t.call('GET', '/v1/dead-letters')).body.items[0]);
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/outbox`);
    const backlog = page.getByRole('table', { name: 'Backlog per destination' });
    await eventually(() =>
      backlog.getByRole('row').filter({ hasText: 'sink:audit' }).textContent(),
    ).toContain('sink:audit');
    await page.getByRole('button', { name: `Inspect dead letter ${dead.id}` }).click();
    const inspect = page.getByRole('dialog', { name: `Dead letter ${dead.id}` });
    await eventually(() => inspect.textContent()).toContain('A-17');
    expect(await inspect.textContent()).toContain('503');
    await inspect.getByRole('button', { name: 'Close' }).click();
    t.receiver.accept = true;
    await page.getByRole('button', { name: `Replay ${dead.id}` }).click();
    await page
      .getByRole('dialog', { name: `Replay dead letter ${dead.id}` })
      .getByRole('button', { name: /Confirm/ })
      .click();
    await until(async () => t.receiver.received.length === 1);
    expect(t.receiver.received[0]).toMatchObject({ data: { order: 'A-17' } });
    await page.reload();
    await page.getByText('No dead letter.').waitFor();
    expect((await t.call('GET', '/v1/dead-letters')).body.items).toEqual([]);
    errors.push(...pageErrors);
    await context.close();
  });

  it('deploys a definition with a mistake, shows the problem at its line, then deploys the fix', async () => {
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/deploy`);
    const broken = [
      'name: shipping',
      'nodes:',
      '  - { id: pack, task_type: ship.pack }',
      '  - { id: send, task_type: ship.send }',
      'edges:',
      '  - { from: pack, to: sned }',
      '',
    ].join('\n');
    await typeInEditor(page, broken);
    await page.getByRole('button', { name: 'Deploy' }).click();
    const problems = page.getByRole('alert').filter({ hasText: 'problem' });
    await problems.getByRole('button', { name: 'line 6' }).waitFor();
    expect(await problems.textContent()).toContain('sned');
    // The editor marks line 6 itself: the underlined range and a marker in the gutter.
    await eventually(() => page.locator('.cm-lintRange-error').textContent()).toContain('to: sned');
    expect(await page.locator('.cm-lint-marker-error').count()).toBe(1);
    await problems.getByRole('button', { name: 'line 6' }).click();
    await eventually(() => page.locator('.cm-activeLine').textContent()).toContain('sned');
    expect((await t.call('GET', '/v1/definitions/shipping')).status).toBe(404);
    await typeInEditor(page, broken.replace('sned', 'send'));
    await page.getByRole('button', { name: 'Deploy' }).click();
    await page.waitForURL(/\/definitions\/shipping\?version=1$/);
    await page.getByRole('heading', { name: 'shipping' }).waitFor();
    expect((await t.call('GET', '/v1/definitions/shipping')).status).toBe(200);
    errors.push(...pageErrors);
    await context.close();
  });

  it('is usable from the keyboard alone, and every control has a name', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'order', input: { amount: 3 } });
    const { page, context, errors: pageErrors } = await openPage(browser);
    await page.goto(`${t.url}/runs`);
    await page.locator(`a[title="${run.body.id}"]`).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    const focusOn = async (test: string, presses = 80) => {
      for (let i = 0; i < presses; i++) {
        if (await page.evaluate(test)) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`Tab never reached: ${test}`);
    };
    await focusOn(`document.activeElement.getAttribute('title') === '${run.body.id}'`);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/runs/${run.body.id}`);
    await page.locator('.react-flow__node').first().waitFor();
    await focusOn(`document.activeElement.classList.contains('react-flow__node')`);
    const focused = await page.evaluate(`document.activeElement.getAttribute('data-id')`);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: new RegExp(`Node ${focused}`) }).waitFor();
    // A dialog opens from the keyboard, closes with Escape, and gives focus back.
    await focusOn(`document.activeElement.textContent === 'Pause'`);
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Pause this run' }).waitFor();
    await page.keyboard.press('Escape');
    await eventually(() => page.getByRole('dialog').count()).toBe(0);
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Pause');
    // The accessibility tree: named landmarks, and no button, link or field without a name.
    for (const path of [
      '/runs',
      `/runs/${run.body.id}`,
      '/definitions/order',
      '/deploy',
      '/inbox',
      '/outbox',
      '/definitions',
      '/schedules',
      '/limits',
      '/workers',
    ]) {
      await page.goto(`${t.url}${path}`);
      await page.locator('main h1').first().waitFor();
      const tree = await page.locator('body').ariaSnapshot();
      expect(tree, path).toContain('navigation "Sections"');
      expect(tree, path).toContain('main');
      const unnamed = tree
        .split('\n')
        .filter((line) => /^\s*- (button|link|textbox|combobox|checkbox)\s*(\[|:|$)/.test(line));
      expect(unnamed, `${path}: controls without a name`).toEqual([]);
    }
    errors.push(...pageErrors);
    await context.close();
  });

  it('fits 768 pixels wide in dark and 1280 in light: no page scrolls sideways', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'order', input: { amount: 4 } });
    const paths = [
      '/runs',
      `/runs/${run.body.id}`,
      '/definitions',
      '/definitions/order',
      '/deploy',
      '/inbox',
    ];
    paths.push('/outbox', '/schedules', '/limits', '/workers');
    for (const [width, scheme] of [
      [768, 'dark'],
      [1280, 'light'],
    ] as const) {
      const { page, context, errors: pageErrors } = await openPage(browser, { width, scheme });
      for (const path of paths) {
        await page.goto(`${t.url}${path}`);
        await page.locator('main h1').first().waitFor();
        const wide = await page.evaluate('document.documentElement.scrollWidth');
        expect(wide, `${path} at ${width}`).toBeLessThanOrEqual(width);
      }
      // The scheme asked for is the one shown: a dark page on dark, a light one on light.
      const background = (await page.evaluate(
        'getComputedStyle(document.body).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)',
      )) as number[];
      const light = background.reduce((a, b) => a + b, 0) / 3 > 128;
      expect(light, `background ${background} in ${scheme}`).toBe(scheme === 'light');
      errors.push(...pageErrors);
      await context.close();
    }
  });
});
