import { join } from 'node:path';
import { TEST_ADMIN_KEY } from '@weft/testing';
import { TerminalError, Worker } from '@weft/worker';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConsoleServer,
  launchBrowser,
  missingBrowser,
  openPage,
  screenshotDir,
  startConsoleServer,
} from './browser.js';
import { APPROVAL, AUDITED, LEAF, NESTED, ORDER, WAITING } from './fixtures.js';

// The pictures of docs/console.md, taken when WEFT_SCREENSHOTS is set (`npm run screenshots`): each view
// in light and dark, 1280 and 768 pixels wide, from a server holding a little of everything.
const dir = screenshotDir();
const missing = missingBrowser();

async function until(check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Fills a server with runs in every state, a human task, a dead letter, a schedule, limits and a worker. */
async function fill(t: ConsoleServer): Promise<{ completed: string; nested: string; deploy: string }> {
  for (const yaml of [
    ORDER,
    ORDER.replace('Reserve, charge, ship.', 'Reserve, charge, ship; retry charges.').replace(
      'input: { amount: input.amount } }',
      'input: { amount: input.amount }, retry: { max_attempts: 5 } }',
    ),
    APPROVAL,
    AUDITED,
    WAITING,
    LEAF,
    NESTED,
  ])
    await t.call('POST', '/v1/definitions', yaml);
  const nested = (await t.call('POST', '/v1/runs', { definition: 'nested' })).body.id;
  await t.call('PUT', '/v1/limits/semaphore/bank', { max: 4 });
  await t.call('PUT', '/v1/limits/concurrency/shop.charge', { max: 20 });
  await t.call('PUT', '/v1/limits/quota', { max: 1000 });
  await t.call('PUT', '/v1/schedules/nightly-report', {
    definition: 'order',
    cron: '0 2 * * *',
    timezone: 'Europe/Paris',
    input: { amount: 1 },
  });
  let n = 0;
  const worker = new Worker({
    url: t.url,
    apiKey: TEST_ADMIN_KEY,
    name: 'shop-worker-1',
    concurrency: 8,
    handlers: {
      'shop.reserve': async () => ({ reservation: `res-${++n}` }),
      'shop.charge': async (input) => {
        if ((input as { amount: number }).amount > 900) throw new TerminalError('card declined');
        return { payment: `pay-${n}`, charged: (input as { amount: number }).amount };
      },
      'shop.notify': async () => ({ sent: true }),
      'shop.ship': async () => ({ tracking: `TRK-${n}` }),
      'shop.refund': async () => ({ refunded: true }),
    },
  });
  await worker.start();
  const ids: string[] = [];
  for (const amount of [12, 40, 999, 75, 18])
    ids.push((await t.call('POST', '/v1/runs', { definition: 'order', input: { amount } })).body.id);
  await until(async () => {
    const runs = (await t.call('GET', '/v1/runs?definition=order&limit=10')).body.items;
    return runs.filter((r: { status: string }) => r.status !== 'running').length >= 5;
  });
  await worker.stop();
  await t.call('POST', '/v1/runs', { definition: 'refund-approval', input: { order: 'A-17', amount: 40 } });
  await t.call('POST', '/v1/runs', { definition: 'audited', input: { order: 'A-18' } });
  const waiting = await t.call('POST', '/v1/runs', { definition: 'waiting' });
  await t.call('POST', `/v1/runs/${waiting.body.id}/pause`, { reason: 'holding for the stock count' });
  await t.call('POST', '/v1/runs', { definition: 'order', input: { amount: 30 } });
  await until(async () => (await t.call('GET', '/v1/dead-letters')).body.items.length > 0);
  return {
    completed: ids[0]!,
    nested,
    deploy:
      'name: shipping\nnodes:\n  - { id: pack, task_type: ship.pack }\n  - { id: send, task_type: ship.send }\nedges:\n  - { from: pack, to: sned }\n',
  };
}

describe.skipIf(dir === null || missing !== null)('console screenshots for docs/console.md', () => {
  let t: ConsoleServer;
  let browser: Browser;
  let data: { completed: string; nested: string; deploy: string };

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    data = await fill(t);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const views: [string, (page: Page) => Promise<void>][] = [
    [
      'runs',
      async (page) => {
        await page.goto(`${t.url}/runs`);
        await page.locator('table.grid tbody tr').first().waitFor();
      },
    ],
    [
      'run',
      async (page) => {
        await page.goto(`${t.url}/runs/${data.completed}`);
        await page.locator('.react-flow__node[data-id="charge"]').click();
        await page.getByRole('heading', { name: /Node charge/ }).waitFor();
      },
    ],
    [
      'run-loop',
      async (page) => {
        await page.goto(`${t.url}/runs/${data.nested}`);
        await page.locator('.react-flow__node[data-id="each"]').click();
        await page
          .getByRole('group', { name: /Items of each/ })
          .getByRole('button')
          .first()
          .waitFor();
      },
    ],
    [
      'definition',
      async (page) => {
        await page.goto(`${t.url}/definitions/order?version=2`);
        await page.locator('.diff').waitFor();
        await page.locator('.react-flow__node').first().waitFor();
      },
    ],
    [
      'deploy',
      async (page) => {
        await page.goto(`${t.url}/deploy`);
        await page.locator('.cm-content').click();
        await page.keyboard.press('ControlOrMeta+a');
        await page.keyboard.press('Delete');
        await page.keyboard.insertText(data.deploy);
        await page.getByRole('button', { name: 'Deploy' }).click();
        await page.locator('.cm-lintRange-error').waitFor();
      },
    ],
    [
      'inbox',
      async (page) => {
        await page.goto(`${t.url}/inbox`);
        await page.getByRole('link', { name: 'Approve the refund' }).click();
        await page.getByLabel('Your name').fill('ann');
        await page.getByLabel('Note').fill('ok');
        await page.getByRole('button', { name: 'Submit answer' }).click();
        await page.getByText('must NOT have fewer than 3 characters').first().waitFor();
      },
    ],
    [
      'outbox',
      async (page) => {
        await page.goto(`${t.url}/outbox`);
        await page
          .getByRole('button', { name: /Inspect dead letter/ })
          .first()
          .waitFor();
      },
    ],
    [
      'schedules',
      async (page) => {
        await page.goto(`${t.url}/schedules`);
        await page.getByText('nightly-report').first().waitFor();
      },
    ],
    [
      'limits',
      async (page) => {
        await page.goto(`${t.url}/limits`);
        await page.getByText('bank').first().waitFor();
      },
    ],
    [
      'workers',
      async (page) => {
        await page.goto(`${t.url}/workers`);
        await page.getByText('shop-worker-1').first().waitFor();
      },
    ],
  ];

  it('takes each view in light and dark, 1280 and 768 wide', async () => {
    let taken = 0;
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [1280, 768]) {
        const { page, context, errors } = await openPage(browser, { width, scheme });
        for (const [name, show] of views) {
          await show(page);
          await page.waitForTimeout(300); // let the graph's fit-to-view settle
          await page.screenshot({ path: join(dir!, `${name}-${scheme}-${width}.png`) });
          taken++;
        }
        expect(errors).toEqual([]);
        await context.close();
      }
    }
    expect(taken).toBe(views.length * 4);
  }, 300_000);
});
