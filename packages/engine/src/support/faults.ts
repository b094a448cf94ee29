/**
 * Named fault points. The shell calls `fault('name')` at places where a crash matters (right after a
 * commit, between delivery and marking); a test arms a point to throw or to kill the process there.
 * Disarmed points cost one map lookup.
 */
const armed = new Map<string, () => void | Promise<void>>();

/** Runs the action armed at `name`, if any. */
export async function fault(name: string): Promise<void> {
  const action = armed.get(name);
  if (action) await action();
}

/** True when a test has armed the fault point `name`. */
export function isArmed(name: string): boolean {
  return armed.has(name);
}

/** Arms a fault point; returns a function that disarms it. */
export function armFault(name: string, action: () => void | Promise<void>): () => void {
  armed.set(name, action);
  return () => {
    if (armed.get(name) === action) armed.delete(name);
  };
}

/** Arms fault points named in the WEFT_FAULTS environment variable (`name=exit,other=exit`): for crash tests. */
export function armFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  for (const item of (env.WEFT_FAULTS ?? '').split(',').filter(Boolean)) {
    const [name, action] = item.split('=');
    if (name && action === 'exit') armFault(name, () => process.exit(86));
  }
}
