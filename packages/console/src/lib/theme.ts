/** Light, dark, or whatever the system prefers (`prefers-color-scheme`); the choice is kept in localStorage. */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'weft.theme';

/** The theme the user chose last. */
export function savedTheme(): ThemeChoice {
  const value = localStorage.getItem(KEY);
  return value === 'light' || value === 'dark' ? value : 'system';
}

/** Applies a theme to the page (`data-theme` on <html>; `system` leaves it to the media query). */
export function applyTheme(choice: ThemeChoice): void {
  if (choice === 'system') {
    delete document.documentElement.dataset.theme;
    localStorage.removeItem(KEY);
  } else {
    document.documentElement.dataset.theme = choice;
    localStorage.setItem(KEY, choice);
  }
}

/** The theme in effect now: the choice, or the system's preference. */
export function effectiveTheme(choice: ThemeChoice): 'light' | 'dark' {
  if (choice !== 'system') return choice;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}
