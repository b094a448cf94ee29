import { WeftClient } from '@weft/client';
import { CliError } from '../errors.js';
import { brief, color, table } from '../output.js';
import { clientOptions, type RemoteOptions } from './remote.js';

async function withClient<T>(o: RemoteOptions, fn: (c: WeftClient) => Promise<T>): Promise<T> {
  const c = new WeftClient(clientOptions(o, 2));
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** `weft dead-letters list`: outbox messages the relay gave up on, newest first. */
export async function listDeadLettersCommand(
  filter: { destination?: string; limit?: number; cursor?: string },
  o: RemoteOptions,
): Promise<void> {
  await withClient(o, async (c) => {
    const page = await c.listDeadLetters(filter);
    if (page.items.length === 0) {
      console.log('no dead letters');
      return;
    }
    console.log(
      table(
        ['ID', 'DESTINATION', 'KIND', 'RUN', 'ATTEMPTS', 'DEAD SINCE', 'LAST ERROR'],
        page.items.map((d) => [
          d.id,
          d.destination,
          d.kind,
          d.run_id,
          String(d.attempts),
          d.dead_at ?? '',
          color.red(brief(d.last_error, 80)),
        ]),
      ),
    );
    if (page.next_cursor) console.log(color.dim(`more: weft dead-letters list --cursor ${page.next_cursor}`));
  });
}

/** `weft dead-letters replay`: puts dead letters back for delivery, by id, by destination, or all. */
export async function replayDeadLettersCommand(
  ids: string[],
  o: { destination?: string; all?: boolean },
  remote: RemoteOptions,
): Promise<void> {
  if (ids.length === 0 && !o.destination && !o.all)
    throw new CliError('name the dead letters to replay: their ids, --destination NAME, or --all');
  if (ids.some((id) => !/^[0-9]+$/.test(id)))
    throw new CliError('dead letter ids are numbers (see weft dead-letters list)');
  await withClient(remote, async (c) => {
    const { replayed } = await c.replayDeadLetters({
      ...(ids.length > 0 ? { ids } : {}),
      ...(o.destination ? { destination: o.destination } : {}),
    });
    console.log(`${replayed} dead letter(s) put back for delivery`);
  });
}
