/** The name the operator works under in the inbox (Weft takes it as given), kept in localStorage. */
const KEY = 'weft.user';

/** The operator's name, or an empty string. */
export function userName(): string {
  return localStorage.getItem(KEY) ?? '';
}

/** Keeps the operator's name. */
export function setUserName(name: string): void {
  localStorage.setItem(KEY, name.trim());
}
