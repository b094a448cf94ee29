import type { ThemeChoice } from '../lib/theme.js';

const NEXT: Record<ThemeChoice, ThemeChoice> = { system: 'dark', dark: 'light', light: 'system' };

/** Switches between the system's theme, dark and light. */
export function ThemeToggle(props: {
  choice: ThemeChoice;
  shown: 'light' | 'dark';
  onChange: (c: ThemeChoice) => void;
}) {
  const label = props.choice === 'system' ? `system (${props.shown})` : props.choice;
  return (
    <button
      type="button"
      className="ghost"
      aria-label={`Theme: ${label}. Change theme`}
      title="Change theme: system, dark, light"
      onClick={() => props.onChange(NEXT[props.choice])}
    >
      {props.shown === 'dark' ? '☾' : '☀'} <span className="tool-label">{label}</span>
    </button>
  );
}
