/** A run's or an attempt's status as a coloured label (the colour is never the only sign: the word is there). */
export function StatusBadge(props: { status: string }) {
  return <span className={`badge status-${props.status}`}>{props.status.replace('_', ' ')}</span>;
}
