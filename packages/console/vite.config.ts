import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console is served by `weft server` and `weft dev` from dist/. `npm run dev -w @weft/console` serves
// it with live reload and sends API calls to a server on port 8080.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 2000 },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080' } },
});
