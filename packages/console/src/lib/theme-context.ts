import { createContext, useContext } from 'react';

/** The theme in effect ('light' or 'dark'), for components that draw with colours of their own. */
export const ThemeContext = createContext<'light' | 'dark'>('light');

/** The theme in effect. */
export function useTheme(): 'light' | 'dark' {
  return useContext(ThemeContext);
}
