/** Where the engine writes what it does; pino fits it, and so does console. */
export interface Logger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
