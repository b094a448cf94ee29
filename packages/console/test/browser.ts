import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSinks } from '@weft/connectors';
import { FolderBlobStore } from '@weft/engine';
import { type RunningServer, serve } from '@weft/server';
import { createTestDatabase, TEST_ADMIN_KEY, type TestDatabase } from '@weft/testing';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

/** The console's build, made by `npm run build` (which `npm test` runs first). */
export const CONSOLE_DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

/** Where Chromium is: WEFT_CHROMIUM, else Debian's package, else null. */
export function findChromium(): string | null {
  const candidates = [process.env.WEFT_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((path) => path && existsSync(path)) ?? null;
}

const INSTALL =
  'the browser tests need Chromium: install it (Debian/Ubuntu: `apt-get install chromium`) or set WEFT_CHROMIUM to its path';

/**
 * Why the browser tests cannot run here (they skip), or null when they can. In CI (`CI` set) they always
 * run: a missing Chromium fails them there instead of skipping them.
 */
export function missingBrowser(): string | null {
  if (findChromium() || process.env.CI) return null;
  return INSTALL;
}

/** Starts Chromium headless, with the flags that keep it quiet and working as root in a container. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (!executablePath) throw new Error(INSTALL);
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A local webhook receiver the test can switch between failing and accepting. */
export interface Receiver {
  readonly url: string;
  accept: boolean;
  readonly received: unknown[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const state = { accept: false, received: [] as unknown[] };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      if (!state.accept) {
        res.writeHead(503).end('not now');
        return;
      }
      state.received.push(JSON.parse(body));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as Receiver;
}

/** A real Weft server on a fresh database, serving the built console, with a webhook sink `audit`. */
export interface ConsoleServer {
  readonly url: string;
  readonly server: RunningServer;
  readonly db: TestDatabase;
  readonly receiver: Receiver;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startConsoleServer(): Promise<ConsoleServer> {
  if (!existsSync(join(CONSOLE_DIST, 'index.html')))
    throw new Error('the console is not built: run `npm run build` before these tests');
  const db = await createTestDatabase();
  const receiver = await startReceiver();
  const server = await serve({
    databaseUrl: db.url,
    port: 0,
    logLevel: 'silent',
    poolSize: 8,
    console: CONSOLE_DIST,
    // Dead letters after two failed deliveries a tenth of a second apart, so the test sees one soon.
    engine: { decidePollMs: 50, timerPollMs: 50, leasePollMs: 100, relayMaxAttempts: 2, relayBackoffMs: 100 },
    sinks: parseSinks({ audit: { kind: 'webhook', url: receiver.url } }),
    // The receiver listens on loopback, which outbound calls refuse unless opened.
    outboundAllow: '127.0.0.1',
    blobs: new FolderBlobStore(mkdtempSync(join(tmpdir(), 'weft-console-blobs-'))),
    auth: { bootstrapAdminKey: TEST_ADMIN_KEY },
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const yaml = typeof body === 'string';
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TEST_ADMIN_KEY}`,
        ...(body === undefined ? {} : { 'content-type': yaml ? 'application/yaml' : 'application/json' }),
      },
      ...(body === undefined ? {} : { body: yaml ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return {
    url: server.url,
    server,
    db,
    receiver,
    call,
    async close() {
      await server.close();
      await receiver.close();
      await db.drop();
    },
  };
}

/**
 * A new page at a viewport width, in a colour scheme, failing the test on any error the page throws. The
 * browser session starts with the test admin key, as if entered at the console's prompt, unless `apiKey`
 * is null (or another key is in the session already).
 */
export async function openPage(
  browser: Browser,
  options: { width?: number; scheme?: 'light' | 'dark'; apiKey?: string | null } = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
    colorScheme: options.scheme ?? 'light',
    reducedMotion: 'reduce',
  });
  const key = options.apiKey === undefined ? TEST_ADMIN_KEY : options.apiKey;
  if (key !== null)
    await context.addInitScript(
      `if (!sessionStorage.getItem('weft.apiKey')) sessionStorage.setItem('weft.apiKey', ${JSON.stringify(key)});`,
    );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.setDefaultTimeout(20_000);
  return { context, page, errors };
}

/** Where screenshots for docs/console.md go, when WEFT_SCREENSHOTS asks for them (else null). */
export function screenshotDir(): string | null {
  if (!process.env.WEFT_SCREENSHOTS) return null;
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'images', 'console');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * `expect.poll` with room for a busy machine: pages update within a second or two, and the assertion
 * waits up to 20 s for them (it passes as soon as the value is right).
 */
export function eventually<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 20_000, interval: 100 });
}
