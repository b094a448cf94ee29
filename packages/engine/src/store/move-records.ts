/** A locked run moved to another version of its definition (`StoreTx.moveRun`). */
export interface RunMoveWrite {
  readonly runId: string;
  readonly definitionId: string;
  readonly definitionVersion: number;
  /** Old node id to new node id: every attempt, arrival, timer, inbox event and human task naming one is renamed. */
  readonly renames: Readonly<Record<string, string>>;
}
