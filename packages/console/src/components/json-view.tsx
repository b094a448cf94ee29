import {
  allExpanded,
  collapseAllNested,
  darkStyles,
  defaultStyles,
  JsonView as Viewer,
} from 'react-json-view-lite';
import 'react-json-view-lite/dist/index.css';
import { useTheme } from '../lib/theme-context.js';

/** A JSON value, folded below the first level when large; scalars are shown plainly. */
export function JsonView(props: { value: unknown; label: string }) {
  const theme = useTheme();
  const value = props.value;
  if (value === null || value === undefined) return <span className="muted">null</span>;
  if (typeof value !== 'object') return <code className="json-scalar">{JSON.stringify(value)}</code>;
  const big = JSON.stringify(value).length > 2000;
  return (
    <figure className="json-view" aria-label={props.label}>
      <Viewer
        data={value as object}
        shouldExpandNode={big ? collapseAllNested : allExpanded}
        style={theme === 'dark' ? darkStyles : defaultStyles}
      />
    </figure>
  );
}
