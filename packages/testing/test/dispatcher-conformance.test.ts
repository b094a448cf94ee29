import {
  dispatcherConformance,
  listDispatcherFixture,
  tableDispatcherFixture,
} from '../src/conformance/index.js';

// Weft's own table queue (rows written with the task's transaction), and a queue of one's own that
// enqueues after commit (its crash window repaired by the engine). The pg-boss dispatcher runs the same
// suite in packages/pgboss.
dispatcherConformance('table', tableDispatcherFixture);
dispatcherConformance('list (enqueue after commit)', listDispatcherFixture);
