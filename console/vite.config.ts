import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The operator console: built into dist/console, served by the API at `/` (docs/console.md). */
export default defineConfig({
  root: decodeURIComponent(new URL('.', import.meta.url).pathname),
  base: '/',
  plugins: [react()],
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    // The CSP forbids inline scripts: no modulepreload polyfill injected into index.html.
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
