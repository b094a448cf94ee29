import type { Engine } from '@weft/engine';
import type { FastifyInstance } from 'fastify';

/** What the database check of `/readyz` found: fine, or a problem with its error code and message. */
export type DatabaseCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: string; readonly message: string };

/** Checks the database for readiness: it answers, and its schema is current. */
export type DatabaseProbe = () => Promise<DatabaseCheck>;

/** How long `/readyz` waits for the database before it says it is unavailable. */
export const READY_TIMEOUT_MS = 2000;

/** How long one round of a background loop may run before `/readyz` says the loop is stuck (by default). */
export const BACKGROUND_STALL_MS = 120_000;

/**
 * Health routes, open to all (no credentials; they say nothing about runs): `/livez` answers while the
 * process serves requests, `/readyz` when it can also do work: the database answers within two seconds,
 * its schema is current and the background loops run, none stuck in one round for longer than `stallMs`.
 * `/healthz` is the same as `/livez`.
 */
export function healthRoutes(
  app: FastifyInstance,
  engine: Engine,
  probe?: DatabaseProbe,
  stallMs = BACKGROUND_STALL_MS,
): void {
  const live = async () => ({ ok: true });
  app.get('/livez', { config: { auth: 'public' } }, live);
  app.get('/healthz', { config: { auth: 'public' } }, live);
  app.get('/readyz', { config: { auth: 'public' } }, async (_request, reply) => {
    const problem = (await checkDatabase(probe)) ?? checkLoops(engine, stallMs);
    if (problem) return reply.status(503).send({ error: problem });
    return { ok: true };
  });
}

/** The database's problem, or null when it answered in time with a current schema. */
async function checkDatabase(
  probe: DatabaseProbe | undefined,
): Promise<{ code: string; message: string } | null> {
  if (!probe) return null;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DatabaseCheck>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          ok: false,
          code: 'database_unavailable',
          message: `PostgreSQL did not answer within ${READY_TIMEOUT_MS} ms; check that it is running and reachable (Weft reconnects by itself once it is)`,
        }),
      READY_TIMEOUT_MS,
    );
  });
  try {
    const found = await Promise.race([probe(), timeout]);
    return found.ok ? null : { code: found.code, message: found.message };
  } finally {
    clearTimeout(timer);
  }
}

/** A problem when a background loop that should run has stopped, or is stuck in one round. */
function checkLoops(engine: Engine, stallMs: number): { code: string; message: string } | null {
  const loops = engine.backgroundStatus();
  const stopped = loops.filter((l) => !l.running);
  if (stopped.length > 0)
    return {
      code: 'background_stopped',
      message: `background loop(s) ${stopped.map((l) => l.name).join(', ')} stopped; restart the server and see its log`,
    };
  const now = Date.now();
  const stuck = loops.filter((l) => l.roundStartedAt && now - l.roundStartedAt.getTime() > stallMs);
  if (stuck.length === 0) return null;
  return {
    code: 'background_stalled',
    message: `background loop(s) ${stuck.map((l) => l.name).join(', ')} stuck in one round for over ${stallMs} ms; look for a blocked query in pg_stat_activity (application weft-server), or restart the server`,
  };
}
