import type { ServerResponse } from 'node:http';
import { WeftError } from '@weft/core';
import { type Engine, NO_PROGRESS } from '@weft/engine';
import type { FastifyInstance } from 'fastify';
import { historyJson, progressJson } from '../wire.js';
import { INT4_MAX } from './fields.js';
import { runId } from './operator-actions.js';

/** Events read per query while catching up. */
const PAGE = 500;
/** A comment line this often keeps proxies from closing a quiet stream. */
const PING_MS = 15_000;

/**
 * A run's history as Server-Sent Events: `GET /v1/runs/{id}/events`. Each event is sent with `id:` set
 * to its sequence number; a client that reconnects with `Last-Event-ID` (or `?after=`) gets every event
 * after that one, exactly once. Sequence numbers are gap-free and a run's events commit in sequence
 * order (they are written under its row lock), so "everything after the last id I saw" loses nothing
 * and repeats nothing (test: "a client that disconnects and reconnects receives every event exactly
 * once"). Decisions taken in this process wake the stream at once; events written by other servers are
 * found by a poll every `pollMs`. After each burst of events comes the run's progress (`event: progress`).
 */
export function eventRoutes(app: FastifyInstance, engine: Engine, pollMs = 500): void {
  const open = new Set<() => void>();
  // Streams never end on their own; end them so that closing the server does not wait for clients.
  app.addHook('preClose', async () => {
    for (const stop of open) stop();
  });

  app.get<{ Params: { id: string }; Querystring: { after?: string } }>(
    '/v1/runs/:id/events',
    // Described for the OpenAPI document; the handler checks the value and says what is wrong.
    {
      config: { auth: 'read' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            after: { type: 'string', description: 'events after this sequence number (or Last-Event-ID)' },
          },
        },
      },
    },
    async (request, reply) => {
      const id = runId(request.params.id);
      const resumeFrom = request.headers['last-event-id'] ?? request.query.after ?? '0';
      const after = Number(Array.isArray(resumeFrom) ? resumeFrom[0] : resumeFrom);
      if (!Number.isInteger(after) || after < 0 || after > INT4_MAX) {
        throw new WeftError(
          'bad_request',
          'Last-Event-ID (or after) must be the sequence number of the last event received (0 or more)',
          400,
        );
      }
      await engine.runs.get(id); // 404 before the stream starts

      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let closed = false;
      let dirty = true;
      let wake: (() => void) | null = null;
      const stop = () => {
        closed = true;
        wake?.();
      };
      open.add(stop);
      res.on('close', stop);
      const unsubscribe = engine.context.wakeups.history.subscribe(id, () => {
        dirty = true;
        wake?.();
      });
      try {
        await write(res, 'retry: 1000\n\n');
        let cursor = after;
        let quietSince = Date.now();
        while (!closed) {
          if (dirty) {
            dirty = false;
            const before = cursor;
            for (;;) {
              const events = await Promise.all(
                (await engine.context.store.readHistory(id, cursor, PAGE)).map((e) =>
                  engine.context.payloads.resolveFields(e, ['data']),
                ),
              );
              for (const event of events) {
                if (closed) break;
                await write(res, `id: ${event.seq}\ndata: ${JSON.stringify(historyJson(event))}\n\n`);
                cursor = event.seq;
                quietSince = Date.now();
              }
              if (events.length < PAGE || closed) break;
            }
            if (cursor !== before && !closed) await writeProgress(res, engine, id);
            continue;
          }
          const timedOut = await new Promise<boolean>((resolve) => {
            if (dirty || closed) return resolve(false);
            const timer = setTimeout(() => resolve(true), pollMs);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = null;
          if (timedOut) dirty = true;
          if (Date.now() - quietSince >= PING_MS) {
            await write(res, ': ping\n\n');
            quietSince = Date.now();
          }
        }
      } catch (error) {
        if (!closed) request.log.warn({ err: error, runId: id }, 'history stream stopped');
      } finally {
        unsubscribe();
        open.delete(stop);
        if (!res.writableEnded) res.end();
      }
    },
  );
}

/**
 * After each burst of events, the run's progress as a named event (`event: progress`, no id): clients that
 * follow only history (EventSource's `onmessage`) never see it, and resuming by Last-Event-ID is unchanged.
 */
async function writeProgress(res: ServerResponse, engine: Engine, runId: string): Promise<void> {
  const run = await engine.context.store.getRun(runId);
  if (!run) return;
  const data = { run_id: run.id, status: run.status, ...progressJson(run.progress ?? NO_PROGRESS) };
  await write(res, `event: progress\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Writes a chunk, waiting for the socket to drain when the client reads slower than we write. */
function write(res: ServerResponse, chunk: string): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
