import type { ChildProcess } from 'node:child_process';

/**
 * Resolves with the URL a `weft server` process says it serves at (its "Weft is serving at" line on stderr),
 * or rejects when the process exits first or prints no such line within `ms`.
 */
export function servingAt(server: ChildProcess, ms = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no "serving at" line in ${ms / 1000} s: ${err}`)), ms);
    server.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /Weft is serving at (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    server.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`weft server exited (${code}) before serving: ${err}`));
    });
  });
}
