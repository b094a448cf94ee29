import {
  dispatcherConformance,
  listDispatcherFixture,
  memoryJoinedListDispatcherFixture,
  memoryListDispatcherFixture,
  memoryTableDispatcherFixture,
  tableDispatcherFixture,
} from '../src/conformance/index.js';

// Weft's own table queue (rows written with the task's transaction), and a queue of one's own that
// enqueues after commit (its crash window repaired by the engine), on PostgreSQL and on the in-memory
// store. The pg-boss dispatcher runs the same suite in packages/pgboss, the Redis one in packages/worker.
dispatcherConformance('table', tableDispatcherFixture);
dispatcherConformance('list (enqueue after commit)', listDispatcherFixture);
dispatcherConformance('table on MemoryStore', memoryTableDispatcherFixture);
dispatcherConformance('list (enqueue after commit) on MemoryStore', memoryListDispatcherFixture);
dispatcherConformance('list (joins the transaction) on MemoryStore', memoryJoinedListDispatcherFixture);
