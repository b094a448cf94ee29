import { TEST_ADMIN_KEY } from '@weft/testing';
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
// The test server's admin key: requests the interception lets through reach the server, which checks it too.
const KEY = TEST_ADMIN_KEY;

// A server that asks for a key answers 401 without it. The browser here stands in front of the API and
// answers 401 to every call without the right bearer token, as such a server does: the console must ask
// for the key once, keep it for the browser session, and send it on every call and on the live stream.
describe.skipIf(missing !== null)('console journeys: the API key', () => {
  let t: ConsoleServer;
  let browser: Browser;

  beforeAll(async () => {
    t = await startConsoleServer();
    browser = await launchBrowser();
    await t.call('POST', '/v1/definitions', WAITING);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('asks for the key on a 401, keeps it for the session, and sends it on every request and stream', async () => {
    const run = await t.call('POST', '/v1/runs', { definition: 'waiting' });
    const { page, context, errors } = await openPage(browser, { apiKey: null });
    const seen: { path: string; auth: string | undefined }[] = [];
    await context.route('**/v1/**', async (route) => {
      const auth = route.request().headers().authorization;
      seen.push({ path: new URL(route.request().url()).pathname, auth });
      if (auth !== `Bearer ${KEY}`)
        return route.fulfill({
          status: 401,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'unauthorized', message: 'send an API key' } }),
        });
      return route.continue();
    });
    await page.goto(`${t.url}/runs/${run.body.id}`);
    const prompt = page.getByRole('dialog', { name: 'API key' });
    await prompt.getByText('This server asks for an API key').waitFor();
    await prompt.getByLabel('API key').fill(KEY);
    await prompt.getByRole('button', { name: 'Use this key' }).click();
    await eventually(() => page.locator('#run-title .badge').textContent()).toBe('running');
    await eventually(() => page.locator('.stream').textContent()).toContain('live');
    const authorised = seen.filter((s) => s.auth === `Bearer ${KEY}`).map((s) => s.path);
    expect(authorised).toContain(`/v1/runs/${run.body.id}`);
    expect(authorised).toContain(`/v1/runs/${run.body.id}/events`);
    // Kept for the session: a reload asks nothing.
    await page.reload();
    await eventually(() => page.locator('#run-title .badge').textContent()).toBe('running');
    expect(await page.getByRole('dialog').count()).toBe(0);
    // A wrong key brings the prompt back, saying the key was refused.
    await page.evaluate(`sessionStorage.setItem('weft.apiKey', 'wrong')`);
    await page.goto(`${t.url}/runs`);
    await page.getByRole('dialog', { name: 'API key' }).getByText('The server refused the key').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
