import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { definitionJsonSchema } from '@weft/core';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/weft.js', import.meta.url));

describe('weft schema', () => {
  it('prints the JSON Schema of definition files', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'schema']);
    const printed = JSON.parse(stdout);
    expect(printed).toEqual(definitionJsonSchema());
    expect(printed.required).toEqual(['name', 'nodes']);
  });
});
