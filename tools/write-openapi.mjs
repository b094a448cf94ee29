// Writes docs/reference/openapi.json from the server's own routes (`npm run docs:openapi`). The app runs on
// the in-memory store without the web console, so the document is the same on every machine.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Engine } from '@weft/engine';
import { MemoryStore } from '@weft/memory';
import { buildApp, openApiDocument } from '@weft/server';

const app = buildApp({
  engine: new Engine({ store: new MemoryStore() }),
  console: null,
  auth: { mode: 'off' },
});
const document = await openApiDocument(app);
await app.close();
const target = fileURLToPath(new URL('../docs/reference/openapi.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(document, null, 2)}\n`);
console.log(`wrote ${target}`);
