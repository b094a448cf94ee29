#!/usr/bin/env node
// The `weft` command. The TypeScript sources build to ../dist (npm run build).
import('../dist/main.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/main.js')) {
    console.error('weft is not built yet: run `npm run build` in the Weft repository first');
    process.exit(1);
  }
  throw error;
});
