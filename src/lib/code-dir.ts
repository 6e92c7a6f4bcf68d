// Where the running code lives, for the files beside it that are not code (SQL migrations, the
// Deno host scripts, the agents' docs bundle, the image render process). Under tsx (tests,
// `npm run dev`) that is src/; in a build (`npm run build`, scripts/build.mjs) it is dist/ (or a
// test's build folder), whose bundles and chunks all sit at its top level, with the other files
// copied below it at their paths under src/.
import path from 'node:path';

/** True when running the TypeScript source (tsx or vitest), false in a build. */
export const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** src/ under tsx, else the build folder (dist/). */
export const CODE_DIR = FROM_SOURCE ? path.resolve(import.meta.dirname, '..') : import.meta.dirname;

/** The project's root: package.json, docs/, node_modules/, dist/dashboard/. */
export const PROJECT_ROOT = path.dirname(CODE_DIR);

/** A path below CODE_DIR, given as it is under src/. */
export function codePath(...parts: string[]): string {
  return path.join(CODE_DIR, ...parts);
}
