import { ApiClient } from './api-client.js';

/** A secret as listed: its name and when it was last set; a value is never answered. */
export interface SecretListing {
  readonly name: string;
  readonly updated_at: string;
}

/** The secrets of a namespace, over the HTTP API: set, list names, delete. */
export class SecretsClient extends ApiClient {
  /** Sets (or replaces) a secret; the server seals it at rest. */
  set(name: string, value: string): Promise<{ name: string; set: true }> {
    return this.call('PUT', `/v1/secrets/${encodeURIComponent(name)}`, { value });
  }

  /** The namespace's secrets by name. */
  async list(): Promise<SecretListing[]> {
    return (await this.call<{ items: SecretListing[] }>('GET', '/v1/secrets')).items;
  }

  /** Deletes a secret; a secret that is not set answers `secret_not_found`. */
  delete(name: string): Promise<{ deleted: true }> {
    return this.call('DELETE', `/v1/secrets/${encodeURIComponent(name)}`);
  }
}
