/**
 * What the console keeps between pages: the API key (for this browser session only, in sessionStorage)
 * and the namespace it works in (kept in localStorage, like a preference).
 */

const KEY = 'weft.apiKey';
const NAMESPACE = 'weft.namespace';

/** The API key entered in this browser session, or null. */
export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Keeps the API key for this browser session; an empty key forgets it. */
export function setApiKey(key: string): void {
  if (key.trim() === '') sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, key.trim());
  changed();
}

/** The namespace requests act in. */
export function namespace(): string {
  return localStorage.getItem(NAMESPACE) ?? 'default';
}

/** Changes the namespace requests act in. */
export function setNamespace(value: string): void {
  localStorage.setItem(NAMESPACE, value);
  changed();
}

let version = 0;
const changeListeners = new Set<() => void>();

function changed(): void {
  version++;
  for (const listener of changeListeners) listener();
}

/** A number that grows each time the key or the namespace changes (live streams start again on it). */
export function sessionVersion(): number {
  return version;
}

/** Calls `listener` whenever the key or the namespace changes. Returns a function that stops. */
export function onSessionChange(listener: () => void): () => void {
  changeListeners.add(listener);
  return () => changeListeners.delete(listener);
}

/** The headers every request carries: the namespace, and the API key as a bearer token when there is one. */
export function sessionHeaders(): Record<string, string> {
  const key = apiKey();
  return { 'x-weft-namespace': namespace(), ...(key ? { authorization: `Bearer ${key}` } : {}) };
}

type Listener = () => void;
const authListeners = new Set<Listener>();

/** Called when the server answers 401: the key prompt opens. Returns a function that stops listening. */
export function onAuthRequired(listener: Listener): () => void {
  authListeners.add(listener);
  return () => authListeners.delete(listener);
}

/** Tells the listeners that the server wants a (new) API key. */
export function authRequired(): void {
  for (const listener of authListeners) listener();
}
