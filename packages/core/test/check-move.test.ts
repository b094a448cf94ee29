import { moveRefusals, nodeMapProblems, type RunMove, type TaskState, type TaskStatus } from '@weft/core';
import { describe, expect, it } from 'vitest';
import { workflowOf } from './sim.js';

// Which runs can move to another version (moveRefusals): the rule the plan and the move both apply.

const v1 = workflowOf(`
name: m
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t }
  - { id: w, kind: wait, duration: 1h }
  - { id: c, task_type: t }
edges:
  - { from: a, to: b }
  - { from: b, to: w }
  - { from: w, to: c }
`);

function v2(yaml: string): RunMove {
  return { from: v1, to: workflowOf(yaml), toVersion: 2, nodeMap: {} };
}

function at(...rows: [string, TaskStatus][]): TaskState[] {
  return rows.map(([nodeId, status]) => ({
    nodeId,
    iteration: '',
    attempt: 1,
    status,
    input: null,
    output: null,
    error: null,
    arrivals: [],
  }));
}

const inserted = v2(`
name: m
nodes:
  - { id: a, task_type: t }
  - { id: b2, task_type: t }
  - { id: x, task_type: t }
  - { id: w, kind: wait, duration: 1h }
  - { id: c, task_type: t }
edges:
  - { from: a, to: b2 }
  - { from: b2, to: x }
  - { from: x, to: w }
  - { from: w, to: c }
`);

describe('which runs can move', () => {
  it('moves a run whose running task is renamed and whose unreached part changes', () => {
    const move = { ...inserted, nodeMap: { b: 'b2' } };
    expect(moveRefusals(move, 'running', at(['a', 'completed'], ['b', 'running']))).toEqual([]);
    expect(moveRefusals(move, 'paused', at(['a', 'completed'], ['b', 'queued']))).toEqual([]);
  });

  it('refuses a finished node whose successors change, naming the change', () => {
    const move = { ...inserted, nodeMap: { b: 'b2' } };
    expect(
      moveRefusals(move, 'running', at(['a', 'completed'], ['b', 'completed'], ['w', 'running'])),
    ).toEqual([
      'node "b" (now "b2") has finished, and version 2 changes where it leads (from w to x): nodes it would now lead to would never start',
      'node "w" has started, and version 2 changes the edges into it (from b2 to x)',
    ]);
  });

  it('refuses a node it has reached that the new version lacks, and says to map it', () => {
    expect(moveRefusals(inserted, 'running', at(['a', 'completed'], ['b', 'running']))).toEqual([
      'node "a" has finished, and version 2 changes where it leads (from b to b2): nodes it would now lead to would never start',
      'node "b" has run (running) and version 2 has no node "b": map it to one of its nodes (nodeMap)',
    ]);
  });

  it('refuses a renamed wait in progress, a changed task type, a new entry node, and a finished run', () => {
    const renamedWait = v2(`
name: m
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: t }
  - { id: w2, kind: wait, duration: 1h }
  - { id: c, task_type: t }
edges:
  - { from: a, to: b }
  - { from: b, to: w2 }
  - { from: w2, to: c }
`);
    const reached = at(['a', 'completed'], ['b', 'completed'], ['w', 'running']);
    expect(moveRefusals({ ...renamedWait, nodeMap: { w: 'w2' } }, 'running', reached)).toEqual([
      'node "w" is running: only a task node, or a node that has finished, can be renamed; move the run once it is done, or keep its id',
    ]);
    const retyped = v2(`
name: m
nodes:
  - { id: a, task_type: t }
  - { id: b, task_type: other }
  - { id: w, kind: wait, duration: 1h }
  - { id: c, task_type: t }
  - { id: z, task_type: t }
edges:
  - { from: a, to: b }
  - { from: b, to: w }
  - { from: w, to: c }
  - { from: z, to: c }
`);
    expect(moveRefusals(retyped, 'running', at(['a', 'completed'], ['b', 'running']))).toEqual([
      'node "b" is running as task type "t", which version 2 changes to "other"',
      'version 2 has entry node "z", which only starts when a run starts: this run would never run it',
    ]);
    expect(moveRefusals(inserted, 'completed', [])).toEqual([
      'the run is completed: only running or paused runs move to another version',
    ]);
  });

  it('finds what is wrong with a node map', () => {
    expect(nodeMapProblems(v1, inserted.to, { b: 'b2', zz: 'x', a: 'b2', c: 'a' }, 2)).toEqual([
      'nodeMap names "zz", which is not a node of the runs\' version: use the old node ids as keys',
      'nodeMap maps both "b" and "a" to "b2": map each node to a node of its own',
      'nodeMap maps "c" to "a", an id the runs\' version uses too: rename to a new id, then rename back in a second move',
    ]);
  });
});
