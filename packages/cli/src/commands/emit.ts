import type { Json } from '@weft/client';
import { CliError } from '../errors.js';
import { status } from '../output.js';
import { type RemoteOptions, withClient } from './remote.js';

/** `weft emit NAME --data JSON --id ID`: sends an event and says which runs it started. */
export async function emitCommand(
  name: string,
  options: { data?: string; id?: string },
  o: RemoteOptions,
): Promise<void> {
  let data: Json = null;
  if (options.data !== undefined) {
    try {
      data = JSON.parse(options.data) as Json;
    } catch (e) {
      throw new CliError(`--data is not valid JSON: ${(e as Error).message}`);
    }
  }
  await withClient(o, async (c) => {
    const sent = await c.emit(name, data, options.id !== undefined ? { id: options.id } : {});
    console.log(`event ${name} (${sent.event.id}): ${sent.runs.length} run(s)`);
    for (const r of sent.runs) {
      const how = r.created ? 'started' : 'already started by this event id';
      console.log(`  ${r.definition} v${r.version}: run ${r.run_id} ${status(r.status)} (${how})`);
    }
    for (const f of sent.failures)
      console.log(`  ${f.definition} v${f.version}: not started: ${f.error.code}: ${f.error.message}`);
    if (sent.failures.length > 0) process.exitCode = 1;
  });
}
