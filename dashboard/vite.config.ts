import { defineConfig } from 'vite';

// The dashboard is served by Plinth itself at /dashboard (src/http/routes/dashboard/).
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/dashboard',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // The code editor (CodeMirror with its languages) is one lazy chunk of ~520 KB (~170 KB gz).
    chunkSizeWarningLimit: 600,
  },
});
