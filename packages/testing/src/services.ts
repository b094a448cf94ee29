import net from 'node:net';

/** The external services some tests need, with their default address on a development machine. */
const SERVICES = {
  redis: { env: 'REDIS_URL', url: 'redis://127.0.0.1:6379', label: 'Redis' },
  nats: { env: 'NATS_URL', url: 'nats://127.0.0.1:4222', label: 'NATS' },
  amqp: { env: 'AMQP_URL', url: 'amqp://guest:guest@127.0.0.1:5672', label: 'RabbitMQ' },
} as const;

/** A service a test may need. */
export type ServiceName = keyof typeof SERVICES;

/**
 * The URL of a service when it answers (from its environment variable, else the default address), or
 * null after printing which service is missing and where it was looked for, so that a skipped test says
 * why. Use it with `describe.skipIf(!url)`.
 */
export async function serviceUrl(name: ServiceName, timeoutMs = 1000): Promise<string | null> {
  const service = SERVICES[name];
  const url = process.env[service.env] ?? service.url;
  const parsed = new URL(url);
  const port = Number(parsed.port) || { redis: 6379, nats: 4222, amqp: 5672 }[name];
  const up = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: parsed.hostname || '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
  if (!up) {
    console.warn(
      `skipping tests that need ${service.label}: nothing answers at ${parsed.hostname}:${port} (set ${service.env} to point at one)`,
    );
    return null;
  }
  return url;
}
