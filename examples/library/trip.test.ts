// A workflow's unit test: the embedded engine on the in-memory store, with a manual clock so retry
// backoffs take no time. No database, no server; the whole file runs in milliseconds.
import { createTestEngine, RunFailedError } from '@weft/embedded';
import { afterEach, describe, expect, it } from 'vitest';
import { type Ledger, trip, tripHandlers } from './trip.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function setup(bank: (attempt: number) => 'ok' | 'down' | 'declined') {
  const ledger: Ledger = { booked: [], cancelled: [], charges: 0 };
  const engine = createTestEngine({ handlers: tripHandlers(ledger, bank) });
  stops.push(() => engine.stop());
  return { engine, ledger };
}

describe('the trip workflow', () => {
  it('books and charges', async () => {
    const { engine, ledger } = setup(() => 'ok');
    const out = await engine.run(trip, { traveller: 'ada', amount: 120 });
    expect(out).toEqual({ flight: 'FL-ada', hotel: 'HO-ada', payment: 'PAY-120' });
    expect(ledger.cancelled).toEqual([]);
  });

  it('retries a charge when the bank is down, after the backoff (the clock is moved, not waited for)', async () => {
    const { engine, ledger } = setup((attempt) => (attempt === 1 ? 'down' : 'ok'));
    const run = await engine.start(trip, { traveller: 'bob', amount: 80 });
    // The first charge fails; its retry is due 30 s after the failure is recorded. Move the clock only
    // once it is (the handler having run is not enough: its report may not be in yet).
    const failed = async () =>
      (await engine.engine.context.store.readHistory(run.id, 0, 1000)).some((e) => e.type === 'task.failed');
    for (let i = 0; i < 400 && !(await failed()); i++) await new Promise((r) => setTimeout(r, 5));
    expect(ledger.charges).toBe(1);
    engine.advance('30s');
    await expect(run.result()).resolves.toMatchObject({ payment: 'PAY-80' });
    expect(ledger.charges).toBe(2);
  });

  it('cancels the hotel, then the flight, when the card is declined', async () => {
    const { engine, ledger } = setup(() => 'declined');
    const error = await engine.run(trip, { traveller: 'cy', amount: 999 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunFailedError);
    expect((error as RunFailedError).error).toMatchObject({
      node: 'payment',
      compensation: { status: 'completed', compensated: ['hotel', 'flight'] },
    });
    expect(ledger.cancelled).toEqual(['HO-cy', 'FL-cy']);
  });
});
