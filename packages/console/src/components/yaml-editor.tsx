import { yaml } from '@codemirror/lang-yaml';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import CodeMirror, { EditorView, type ReactCodeMirrorRef } from '@uiw/react-codemirror';
import { useEffect, useMemo, useRef } from 'react';
import type { DefinitionProblem } from '../api/types.js';
import { useTheme } from '../lib/theme-context.js';

/**
 * YAML in CodeMirror: syntax colours, line numbers, and each problem the server found marked on its
 * line (a marker in the gutter, the line underlined, the message on hover).
 */
export function YamlEditor(props: {
  value: string;
  onChange?: (value: string) => void;
  readOnly?: boolean;
  problems?: readonly DefinitionProblem[];
  label: string;
  /** A line to move the cursor to (and show), when it changes. */
  goTo?: { line: number } | null;
}) {
  const theme = useTheme();
  const ref = useRef<ReactCodeMirrorRef>(null);
  // The label goes on the editable content itself, the element a screen reader lands on.
  const extensions = useMemo(
    () => [
      yaml(),
      lintGutter(),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ 'aria-label': props.label }),
    ],
    [props.label],
  );
  useEffect(() => {
    const view = ref.current?.view;
    if (!view) return;
    const doc = view.state.doc;
    const diagnostics: Diagnostic[] = (props.problems ?? []).map((p) => {
      const line = doc.line(Math.min(Math.max(p.line, 1), doc.lines));
      return { from: line.from, to: Math.max(line.to, line.from), severity: 'error', message: p.message };
    });
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }, [props.problems]);
  useEffect(() => {
    const view = ref.current?.view;
    if (!view || !props.goTo) return;
    const line = view.state.doc.line(Math.min(Math.max(props.goTo.line, 1), view.state.doc.lines));
    view.dispatch({
      selection: { anchor: line.from },
      effects: EditorView.scrollIntoView(line.from, { y: 'center' }),
    });
    view.focus();
  }, [props.goTo]);
  return (
    <div className="yaml-editor">
      <CodeMirror
        ref={ref}
        value={props.value}
        theme={theme}
        extensions={extensions}
        readOnly={props.readOnly ?? false}
        editable={!props.readOnly}
        basicSetup={{ foldGutter: false, highlightActiveLine: !props.readOnly }}
        onChange={(value) => props.onChange?.(value)}
        minHeight="240px"
        maxHeight="560px"
      />
    </div>
  );
}
