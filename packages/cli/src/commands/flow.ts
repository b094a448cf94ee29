import { type Json, WeftClient } from '@weft/client';
import { parseDuration } from '@weft/core';
import { type Command, InvalidArgumentError } from 'commander';
import { UsageError } from '../errors.js';
import { brief, color, print, status, table } from '../output.js';
import { clientOptions, type RemoteOptions } from './remote.js';

const KINDS = ['concurrency', 'semaphore', 'rate', 'quota'] as const;

async function withClient<T>(o: RemoteOptions, fn: (c: WeftClient) => Promise<T>): Promise<T> {
  const c = new WeftClient(clientOptions(o, 2));
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

function json(text: string, what: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw new UsageError(`${what} is not valid JSON: ${(e as Error).message}`);
  }
}

function whole(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number');
  return n;
}

const me = () => process.env.WEFT_USER ?? process.env.USER ?? 'unknown';

/**
 * `weft limits`, `weft inbox`, `weft schedules` and `weft sweep`: flow control and safety nets.
 * `remote` gives the server URL and namespace options.
 */
export function registerFlowCommands(program: Command, remote: () => RemoteOptions): void {
  const limits = program
    .command('limits')
    .description('concurrency caps, semaphores, rate limits and the quota');
  limits
    .command('list', { isDefault: true })
    .description('limits of the namespace and how much of each is in use')
    .action(() =>
      withClient(remote(), async (c) => {
        print(await c.listLimits(), ({ items }) =>
          items.length === 0
            ? 'no limits'
            : table(
                ['KIND', 'NAME', 'MAX', 'PER', 'IN USE'],
                items.map((l) => [
                  l.kind,
                  l.name || '(namespace)',
                  String(l.max),
                  l.per_ms ? `${l.per_ms}ms` : '',
                  String(l.used),
                ]),
              ),
        );
      }),
    );
  limits
    .command('set')
    .description(
      'set a limit: `set concurrency TASK_TYPE N`, `set semaphore NAME N`, `set rate KEY N --per 1m`, `set quota N`',
    )
    .argument('<kind>', KINDS.join(' | '))
    .argument('<name-or-max>', 'the name (the max, for a quota)')
    .argument('[max]', 'the max')
    .option('--per <duration>', 'the window of a rate limit, such as 1s or 1m')
    .action((kind: string, a: string, b: string | undefined, o: { per?: string }) =>
      withClient(remote(), async (c) => {
        if (!(KINDS as readonly string[]).includes(kind))
          throw new UsageError(`kind must be one of ${KINDS.join(', ')}`);
        const [name, max] = kind === 'quota' ? ['', a] : [a, b];
        if (max === undefined) throw new UsageError('give the max');
        if (o.per !== undefined && !parseDuration(o.per).ok)
          throw new UsageError(`--per: ${o.per} is not a duration`);
        const l = await c.setLimit(kind as (typeof KINDS)[number], name, whole(max), o.per);
        print(
          l,
          () =>
            `${l.kind} ${l.name || '(namespace)'}: at most ${l.max}${l.per_ms ? ` per ${o.per}` : ''} (in use: ${l.used})`,
        );
      }),
    );
  limits
    .command('delete')
    .description('lift a limit')
    .argument('<kind>', KINDS.join(' | '))
    .argument('[name]', 'the name (none for a quota)')
    .action((kind: string, name: string | undefined) =>
      withClient(remote(), async (c) => {
        await c.deleteLimit(kind as (typeof KINDS)[number], name ?? '');
        print(
          { deleted: true, kind, name: name ?? '' },
          () => `lifted the ${kind} limit${name ? ` ${name}` : ''}`,
        );
      }),
    );

  const inbox = program
    .command('inbox')
    .description('tasks for people (human nodes): list, show, claim, release, complete');
  inbox
    .command('list', { isDefault: true })
    .description('open tasks, oldest first')
    .option('--state <state>', 'open, completed, expired or cancelled', 'open')
    .option('--for <name>', 'only tasks for this person or group (and tasks for anyone)')
    .option('--mine', 'only tasks I claimed (WEFT_USER or USER)')
    .option('--limit <n>', 'how many', whole, 50)
    .action((o: { state: string; for?: string; mine?: boolean; limit: number }) =>
      withClient(remote(), async (c) => {
        const page = await c.inbox({
          state: o.state as 'open',
          limit: o.limit,
          ...(o.for ? { assignee: o.for } : {}),
          ...(o.mine ? { claimed_by: me() } : {}),
        });
        print(page, ({ items }) =>
          items.length === 0
            ? 'nothing in the inbox'
            : table(
                ['TASK', 'TITLE', 'RUN', 'FOR', 'CLAIMED BY', 'DEADLINE', 'STATE'],
                items.map((t) => [
                  t.task_id,
                  t.title,
                  `${t.definition} ${t.run_id.slice(0, 13)}…`,
                  t.assignees.join(',') || 'anyone',
                  t.claimed_by ?? '',
                  t.deadline_at ?? '',
                  status(t.state),
                ]),
              ),
        );
      }),
    );
  inbox
    .command('show')
    .description('a task: what it shows, its form and its state')
    .argument('<task-id>')
    .action((id: string) =>
      withClient(remote(), async (c) => {
        print(await c.humanTask(id), (t) => [
          `${color.bold(t.title)}  ${status(t.state)}`,
          ...(t.description ? [t.description] : []),
          `run ${t.run_id} (${t.definition}), node ${t.node_id}`,
          `for: ${t.assignees.join(', ') || 'anyone'}; claimed by: ${t.claimed_by ?? 'nobody'}`,
          ...(t.deadline_at ? [`deadline: ${t.deadline_at}`] : []),
          `input: ${JSON.stringify(t.input, null, 2)}`,
          ...(t.form ? [`form: ${JSON.stringify(t.form, null, 2)}`] : []),
          ...(t.data !== null ? [`answer (${t.completed_by}): ${brief(t.data, 200)}`] : []),
        ]);
      }),
    );
  for (const verb of ['claim', 'release'] as const) {
    inbox
      .command(verb)
      .description(verb === 'claim' ? 'take a task, so nobody else works on it' : 'give a claimed task back')
      .argument('<task-id>')
      .option('--user <name>', 'who (default WEFT_USER or USER)')
      .action((id: string, o: { user?: string }) =>
        withClient(remote(), async (c) => {
          const t =
            verb === 'claim'
              ? await c.claimHumanTask(id, o.user ?? me())
              : await c.releaseHumanTask(id, o.user ?? me());
          print(t, () =>
            verb === 'claim' ? `claimed "${t.title}" for ${t.claimed_by}` : `released "${t.title}"`,
          );
        }),
      );
  }
  inbox
    .command('complete')
    .description('answer a task with data matching its form; the run moves on')
    .argument('<task-id>')
    .option('-d, --data <json>', 'the answer as JSON', '{}')
    .option('--user <name>', 'who (default WEFT_USER or USER)')
    .action((id: string, o: { data: string; user?: string }) =>
      withClient(remote(), async (c) => {
        const t = await c.completeHumanTask(id, o.user ?? me(), json(o.data, '--data'));
        print(t, () => `completed "${t.title}"; run ${t.run_id} moves on`);
      }),
    );

  const schedules = program.command('schedules').description('cron schedules that start runs');
  schedules
    .command('list', { isDefault: true })
    .description('schedules of the namespace')
    .action(() =>
      withClient(remote(), async (c) => {
        print(await c.listSchedules(), ({ items }) =>
          items.length === 0
            ? 'no schedules'
            : table(
                ['NAME', 'DEFINITION', 'CRON', 'TIME ZONE', 'OVERLAP', 'NEXT', 'LAST'],
                items.map((s) => [
                  s.paused ? `${s.name} ${color.yellow('(paused)')}` : s.name,
                  s.definition + (s.version ? ` v${s.version}` : ''),
                  s.cron,
                  s.timezone,
                  s.overlap,
                  s.paused ? '' : (s.next_at ?? 'never'),
                  s.last_outcome ?? '',
                ]),
              ),
        );
      }),
    );
  schedules
    .command('set')
    .description('create or replace a schedule')
    .argument('<name>')
    .requiredOption('--definition <name>', 'the definition to start')
    .requiredOption('--cron <expr>', 'minute hour day month weekday (or six fields, seconds first)')
    .option('--timezone <tz>', 'IANA time zone, such as Europe/Paris', 'UTC')
    .option('--overlap <policy>', 'when the previous run still runs: skip, allow or buffer_one', 'skip')
    .option('-i, --input <json>', 'input of each run', '{}')
    .option('--version <n>', 'pin a version', whole)
    .option('--paused', 'create it paused')
    .action(
      (
        name: string,
        o: {
          definition: string;
          cron: string;
          timezone: string;
          overlap: string;
          input: string;
          version?: number;
          paused?: boolean;
        },
      ) =>
        withClient(remote(), async (c) => {
          const s = await c.putSchedule(name, {
            definition: o.definition,
            cron: o.cron,
            timezone: o.timezone,
            overlap: o.overlap as 'skip',
            input: json(o.input, '--input'),
            ...(o.version ? { version: o.version } : {}),
            ...(o.paused ? { paused: true } : {}),
          });
          print(
            s,
            () =>
              `schedule ${s.name}: ${s.cron} (${s.timezone}); next start ${s.paused ? 'when resumed' : (s.next_at ?? 'never')}`,
          );
        }),
    );
  for (const verb of ['pause', 'resume'] as const) {
    schedules
      .command(verb)
      .description(verb === 'pause' ? 'stop starting runs' : 'start runs again (missed times are skipped)')
      .argument('<name>')
      .action((name: string) =>
        withClient(remote(), async (c) => {
          const s = await c.pauseSchedule(name, verb === 'pause');
          print(
            s,
            () =>
              `schedule ${s.name} is ${s.paused ? 'paused' : `running; next start ${s.next_at ?? 'never'}`}`,
          );
        }),
      );
  }
  schedules
    .command('delete')
    .argument('<name>')
    .action((name: string) =>
      withClient(remote(), async (c) => {
        await c.deleteSchedule(name);
        print({ deleted: true, name }, () => `deleted schedule ${name}`);
      }),
    );

  program
    .command('sweep')
    .description('the stuck-run sweeper: its figures, or a round now with --now')
    .option('--now', 'run a round now')
    .option('--idle <duration>', 'with --now: how long a run must be idle to count as stuck')
    .action((o: { now?: boolean; idle?: string }) =>
      withClient(remote(), async (c) => {
        if (o.now) {
          const idle = o.idle === undefined ? undefined : parseDuration(o.idle);
          if (idle && !idle.ok) throw new UsageError(`--idle: ${idle.error}`);
          const swept = await c.sweep(idle?.ok ? idle.value : undefined);
          const { repaired } = swept;
          print(swept, () =>
            repaired.length === 0 ? 'no stuck runs' : `repaired ${repaired.length}: ${repaired.join(', ')}`,
          );
          return;
        }
        print(await c.sweeper(), (s) => {
          const line = `rounds ${s.rounds}, repaired ${s.repaired} (idle threshold ${s.idle_ms} ms)${s.recent.length ? `; recent: ${s.recent.join(', ')}` : ''}`;
          return s.checked_moved + s.checked_stuck > 0
            ? [
                line,
                `checked later: ${s.checked_moved} moved, ${s.checked_stuck} still stuck (weft sweeper repairs --stuck)`,
              ]
            : line;
        });
      }),
    );
}
