export * from './dispatcher-conformance.js';
export * from './dispatcher-fixture.js';
export * from './dispatcher-fixtures.js';
export {
  completion,
  deploy,
  type Fixture,
  freshNamespace,
  insertRun,
  lease,
  leaseRequest,
  queueTask,
  type StoreFactory,
  type StoreUnderTest,
} from './store-fixtures.js';
export { storeConformance } from './store-suite.js';
