/** An optional package a feature needs is not installed; the message says what to install. */
export class MissingPackageError extends Error {
  override readonly name = 'MissingPackageError';
}
