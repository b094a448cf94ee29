export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { isMemoryTransactionHandle, type MemoryTransactionHandle } from './transaction-handle.js';
