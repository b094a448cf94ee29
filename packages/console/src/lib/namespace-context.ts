import { createContext, useContext } from 'react';

/** The namespace the console works in; part of every query key, so changing it reloads every view. */
export const NamespaceContext = createContext<string>('default');

/** The namespace the console works in. */
export function useNamespace(): string {
  return useContext(NamespaceContext);
}
