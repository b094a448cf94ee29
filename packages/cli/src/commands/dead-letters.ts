import { WeftClient } from '@weft/client';
import { UsageError } from '../errors.js';
import { brief, color, print, table } from '../output.js';
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
    print(await c.listDeadLetters(filter), (page) => {
      if (page.items.length === 0) return 'no dead letters';
      const rows = table(
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
      );
      return page.next_cursor
        ? [rows, color.dim(`more: weft dead-letters list --cursor ${page.next_cursor}`)]
        : rows;
    });
  });
}

/** `weft dead-letters replay`: puts dead letters back for delivery, by id, by destination, or all. */
export async function replayDeadLettersCommand(
  ids: string[],
  o: { destination?: string; all?: boolean },
  remote: RemoteOptions,
): Promise<void> {
  if (ids.length === 0 && !o.destination && !o.all)
    throw new UsageError('name the dead letters to replay: their ids, --destination NAME, or --all');
  if (ids.some((id) => !/^[0-9]+$/.test(id)))
    throw new UsageError('dead letter ids are numbers (see weft dead-letters list)');
  await withClient(remote, async (c) => {
    const answer = await c.replayDeadLetters({
      ...(ids.length > 0 ? { ids } : {}),
      ...(o.destination ? { destination: o.destination } : {}),
    });
    print(answer, (a) => `${a.replayed} dead letter(s) put back for delivery`);
  });
}
