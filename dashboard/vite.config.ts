import { gzipSync } from 'node:zlib';
import { type Plugin, defineConfig } from 'vite';

/** The first page's JavaScript (the entry and what it imports statically), gzipped, printed after every build. */
function firstPageSize(): Plugin {
  return {
    name: 'plinth-first-page-size',
    generateBundle(_, bundle) {
      const entry = Object.values(bundle).find((c) => c.type === 'chunk' && c.isEntry);
      if (entry?.type !== 'chunk') return;
      const files = new Set<string>();
      const visit = (name: string) => {
        const c = bundle[name];
        if (c?.type !== 'chunk' || files.has(name)) return;
        files.add(name);
        for (const i of c.imports) visit(i);
      };
      visit(entry.fileName);
      const gz = [...files].reduce(
        (n, f) => n + gzipSync((bundle[f] as { code: string }).code, { level: 9 }).length,
        0,
      );
      // biome-ignore lint/suspicious/noConsole: the build's report of the budget
      console.log(
        `dashboard first page: ${files.size} JS file(s), ${(gz / 1024).toFixed(1)} KiB gzipped (budget 100 KiB)`,
      );
      if (gz > 100 * 1024)
        this.error(`The first page's JS is ${(gz / 1024).toFixed(1)} KiB gzipped: over the 100 KiB budget.`);
    },
  };
}

// The dashboard is served by Plinth itself at /dashboard (src/http/routes/dashboard/).
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  logLevel: 'warn',
  plugins: [firstPageSize()],
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
