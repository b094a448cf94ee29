import { TEST_AUTH_HEADERS } from '@weft/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Requests the HTTP fuzz test (fuzz.test.ts) found answered with a 500, each kept here as a focused case.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, { console: null });
});
afterAll(async () => {
  await t?.close();
});

describe('found by the fuzz test', () => {
  it('a UUID field of 36 hyphens or zeros is a 400, not a failed statement', async () => {
    const real = '01a23572-dce0-7816-969a-b74ffe8fbc32';
    for (const bad of ['-'.repeat(36), '0'.repeat(36)]) {
      const complete = await t.call('POST', `/v1/tasks/${bad}/complete`, {
        run_id: real,
        attempt: 1,
        lease_token: real,
      });
      expect(complete.status, bad).toBe(400);
      expect(complete.body.error.message).toContain('params.id');
      const heartbeat = await t.call('POST', '/v1/tasks/heartbeat', {
        worker: 'w',
        tasks: [{ run_id: real, task_id: real, attempt: 1, lease_token: bad }],
      });
      expect(heartbeat.status, bad).toBe(400);
      expect(heartbeat.body.error.message).toContain('body.tasks[0].lease_token');
    }
  });

  it('a YAML alias inside the value it names, or aliases expanding past the limit, is a 422', async () => {
    const cyclic = await t.call('POST', '/v1/definitions', 'a: &a [*a]\n');
    expect(cyclic.status).toBe(422);
    expect(cyclic.body.error.message).toContain('the alias *a is inside the value it names');
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++)
      levels.push(
        `${'abcdefgh'[i]}: &${'abcdefgh'[i]} [${`*${'abcdefgh'[i - 1]}, `.repeat(9)}*${'abcdefgh'[i - 1]}]`,
      );
    const bomb = await t.call('POST', '/v1/definitions', `${levels.join('\n')}\n`);
    expect(bomb.status).toBe(422);
    expect(bomb.body.error.message).toContain('expands to more than 100000 values');
  });

  it('a run id that is no UUID and no run is a 404, whatever its characters, not a failed archive read', async () => {
    for (const id of ['fuzz.a', "'; DROP TABLE weft.runs; --", '\u202eabc', '../../etc']) {
      const got = await t.call('GET', `/v1/runs/${encodeURIComponent(id)}`);
      expect(got.status, id).toBe(404);
      expect(got.body.error.code, id).toBe('run_not_found');
    }
  });

  it('a dead-letter id or cursor past the largest bigint is refused, not a failed statement', async () => {
    const cursor = await t.call('GET', '/v1/dead-letters?cursor=9223372036854776000&limit=1');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe('bad_request');
    const replay = await t.call('POST', '/v1/dead-letters/9223372036854775808/replay');
    expect(replay.status).toBe(404);
    const many = await t.call('POST', '/v1/dead-letters/replay', { ids: ['9999999999999999999'] });
    expect(many.status).toBe(400);
  });

  it('a body nested too deep to serialise that fails validation is a 400 naming the field', async () => {
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const res = await fetch(`${t.url}/v1/tasks/report`, {
      method: 'POST',
      headers: { ...TEST_AUTH_HEADERS, 'content-type': 'application/json' },
      body: `{"worker":"w","reports":[{"run_id":"r","task_id":"t","attempt":1,"lease_token":"l","output":${deep}}]}`,
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(res.status).toBe(400);
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toContain('body.reports[0]');
  });

  it('an audit list cursor past the largest bigint is refused, not a failed statement', async () => {
    const before = await t.call('GET', '/v1/audit?before=9223372036854776000');
    expect(before.status).toBe(400);
    expect(before.body.error.code).toBe('bad_request');
    expect((await t.call('GET', '/v1/audit?before=12')).status).toBe(200);
  });

  it('setting a limit while another request lifts it answers with the limit set', async () => {
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? t.call('PUT', '/v1/limits/quota', { max: i + 1 })
            : t.call('DELETE', '/v1/limits/quota'),
        ),
      );
      for (const a of answers) expect([200, 404]).toContain(a.status);
    }
  });
});
