export * from './dispatcher-conformance.js';
export * from './dispatcher-fixture.js';
export * from './dispatcher-fixtures.js';
