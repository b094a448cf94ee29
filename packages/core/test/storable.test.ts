import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, storageProblem } from '../src/storable.js';

describe('storageProblem', () => {
  it('accepts values PostgreSQL can store', () => {
    expect(storageProblem({ a: [1, 'x', { b: null, 'odd key': true }], c: 'é😀' }, 'body')).toBeNull();
  });

  it('names the path of the first value it cannot store', () => {
    const value = { reports: [{ ok: 'x' }, { output: { 'odd key': ['fine', 'nul\u0000'] } }] };
    expect(storageProblem(value, 'body')).toEqual({
      path: 'body.reports[1].output["odd key"][1]',
      message: expect.stringContaining('U+0000'),
    });
  });

  it('reports a key it cannot store at the object that holds it', () => {
    expect(storageProblem({ a: { '\ud800x': 1 } }, 'input')).toEqual({
      path: 'input.a',
      message: expect.stringMatching(/^has a key that holds a lone UTF-16 surrogate/),
    });
  });

  it('reports the root itself by its name', () => {
    expect(storageProblem('\udc00', 'params')?.path).toBe('params');
  });

  it('walks an own "__proto__" key of parsed JSON like any other', () => {
    const value = JSON.parse('{"__proto__": {"x": "\\u0000"}}');
    expect(storageProblem(value, 'body')?.path).toBe('body.__proto__.x');
  });

  it('stops at the nesting limit, deeper than the call stack would allow', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) deep = [deep];
    const problem = storageProblem({ v: deep }, 'body');
    expect(problem?.message).toMatch(/nested deeper than 512 levels/);
    expect(problem?.path).toBe(`body.v${'[0]'.repeat(MAX_JSON_DEPTH - 1)}`);
  });
});
