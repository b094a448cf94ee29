// The embedded path's process: Weft as a library (createEngine on a PgStore), no-op handlers run in
// process, no HTTP. It starts runs when the parent asks (over IPC), records when each handler starts and
// ends (wall-clock milliseconds, microsecond precision, the clock the parent and the worker processes use),
// and answers with the engine's counters, so that the parent measures it as it measures a server.
import { createEngine, type RunHandle } from '@weft/embedded';
import { connect, PgStore, PgTaskLogStore } from '@weft/postgres';
import type { EmbeddedReply, EmbeddedRequest } from './embedded-protocol.js';
import { now, TimingFeed } from './timing-feed.js';

// Records go to the benchmark unasked (id 0), as a benchmark worker's do (see TimingFeed).
const feed = new TimingFeed((timings) => process.send?.({ id: 0, timings } satisfies EmbeddedReply));
const definition = process.env.WEFT_BENCH_DEFINITION!;
// Every run's input (W4's map items), as the parent gives it.
const input = JSON.parse(process.env.WEFT_BENCH_INPUT ?? '{}');
// Statements are counted as the server counts them (weft_db_statements_total), once the engine exists.
let stats: { statementsSent: number; eventsDecided: number; instancesRead: number } | undefined;
const sql = connect(process.env.DATABASE_URL!, {
  max: Number(process.env.WEFT_BENCH_POOL ?? 20),
  applicationName: 'weft-bench-embedded',
  onStatement: () => {
    if (stats) stats.statementsSent++;
  },
});
const weft = createEngine({
  store: new PgStore(sql),
  taskLogStore: new PgTaskLogStore(sql),
  concurrency: Number(process.env.WEFT_CONCURRENCY ?? 512),
  worker: 'bench-embedded',
  handlers: [
    {
      taskType: 'bench.noop',
      run: (_input, ctx) => {
        feed.record(ctx.runId, ctx.nodeId, ctx.iteration, now());
        return null;
      },
    },
  ],
});
stats = weft.engine.context.stats;

/**
 * Every run's result is awaited, as a program using the library would: the promises not yet settled, and
 * when the last one arrived.
 */
let awaiting: Promise<unknown>[] = [];
let lastResultAt = 0;

/** Starts `count` runs at once; their start times (all the same instant, as a bulk request's). */
async function burst(count: number): Promise<[string, number][]> {
  const at = now();
  const handles = await Promise.all(Array.from({ length: count }, () => weft.start(definition, input)));
  awaiting.push(...handles.map((h) => result(h)));
  return handles.map((h) => [h.id, at]);
}

async function result(h: RunHandle): Promise<void> {
  await h.result();
  lastResultAt = Math.max(lastResultAt, now());
}

/** Starts `count` runs one by one at `rate` a second, each timed when its start was called. */
async function paced(count: number, rate: number): Promise<[string, number][]> {
  const sent: [string, number][] = [];
  const began = now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = began + (i * 1000) / rate - now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const at = now();
    pending.push(
      weft.start(definition, input).then((h) => {
        sent.push([h.id, at]);
        awaiting.push(result(h));
      }),
    );
  }
  await Promise.all(pending);
  return sent;
}

async function answer(m: EmbeddedRequest): Promise<EmbeddedReply> {
  switch (m.cmd) {
    case 'deploy':
      await weft.deploy(m.yaml);
      return { id: m.id };
    case 'burst':
      return { id: m.id, sent: await burst(m.count) };
    case 'paced':
      return { id: m.id, sent: await paced(m.count, m.rate) };
    case 'settled': {
      await Promise.all(awaiting);
      awaiting = [];
      return { id: m.id, at: lastResultAt };
    }
    case 'dump':
      return { id: m.id, timings: feed.take() };
    case 'counters':
      return {
        id: m.id,
        counters: {
          events: stats!.eventsDecided,
          reads: stats!.instancesRead,
          statements: stats!.statementsSent,
        },
      };
    case 'stop':
      await weft.stop();
      await sql.end({ timeout: 5 });
      return { id: m.id };
  }
}

process.on('message', (m: EmbeddedRequest) => {
  answer(m).then(
    (reply) => {
      process.send?.(reply);
      if (m.cmd === 'stop') process.exit(0);
    },
    (e: unknown) => process.send?.({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
  );
});

await weft.ready();
process.send?.({ ready: true });

// The benchmark that forked this process is gone (it crashed or was killed): nothing will ask for a stop,
// so stop here rather than keep polling the database and loading the machine of the next measurement.
process.on('disconnect', () => {
  weft.stop().finally(() => process.exit(1));
});
