import { type StorageProblem, storageProblem, WeftError } from '@weft/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Refuses, with a 400 naming the field, any request whose body, query string or path holds a value
 * PostgreSQL cannot store: text with U+0000, half of a surrogate pair, JSON nested past the limit. Checked
 * once for every route, before its schema, so no route can forget it (see decision 0128).
 *
 * A worker's task output is the exception: the worker cannot send a different one, so the engine fails
 * that attempt for good (`output_not_storable`) instead of refusing the whole report.
 */
export function installInputGuard(app: FastifyInstance): void {
  // Callback style: no promise per request (every request passes here).
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = inputProblem(request);
    if (!problem) return done();
    done(
      new WeftError('bad_request', `${problem.path} ${problem.message}`, 400, {
        problems: [{ path: problem.path, message: problem.message }],
      }),
    );
  });
}

/** Routes whose body carries worker outputs, and where: checked by the engine, not refused here. */
const OUTPUT_ROUTES: Readonly<Record<string, 'reports' | 'single'>> = {
  '/v1/tasks/report': 'reports',
  '/v1/tasks/:id/complete': 'single',
};

function inputProblem(request: FastifyRequest): StorageProblem | null {
  return (
    storageProblem(request.params, 'params') ??
    storageProblem(request.query, 'querystring') ??
    storageProblem(withoutOutputs(request), 'body')
  );
}

/** The body, less the worker outputs it carries (see OUTPUT_ROUTES). */
function withoutOutputs(request: FastifyRequest): unknown {
  const body = request.body as Record<string, unknown> | null | undefined;
  const kind = OUTPUT_ROUTES[request.routeOptions.url ?? ''];
  if (!kind || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  if (kind === 'single') return { ...body, output: null };
  if (!Array.isArray(body.reports)) return body;
  return {
    ...body,
    reports: body.reports.map((r: unknown) =>
      r !== null && typeof r === 'object' && !Array.isArray(r) ? { ...r, output: null } : r,
    ),
  };
}
