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
import { WAITING } from './fixtures.js';

const missing = missingBrowser();
if (missing) console.warn(`skipping the console's browser tests: ${missing}`);

describe.skipIf(missing !== null)('console journeys: search attributes', () => {
  let t: ConsoleServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    expect((await t.call('POST', '/v1/definitions', WAITING)).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("filters the runs table by an attribute, and links each of a run's attributes to its runs", async () => {
    const name = 'waiting';
    const tagged = await t.call('POST', '/v1/runs', { definition: name, attributes: { customer: 42 } });
    const other = await t.call('POST', '/v1/runs', { definition: name, attributes: { customer: 7 } });
    expect(tagged.status).toBe(201);
    const { page, errors } = await openPage(browser);
    await page.goto(`${t.url}/runs`);
    await page.getByLabel('Attribute').fill('customer:42');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/attr=customer%3A42/);
    // Until the filtered page arrives the table may still show every run: wait for both sides at once.
    const shown = async (ids: string[]) =>
      Promise.all(ids.map((id) => page.locator(`a[title="${id}"]`).count()));
    await eventually(() => shown([tagged.body.id, other.body.id])).toEqual([1, 0]);

    await page.goto(`${t.url}/runs/${other.body.id}`);
    await page.getByRole('link', { name: 'customer=7' }).click();
    await page.waitForURL(/attr=customer%3A7/);
    await eventually(() => shown([other.body.id, tagged.body.id])).toEqual([1, 0]);
    expect(errors).toEqual([]);
  });
});
