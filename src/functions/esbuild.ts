/** esbuild's `build`, imported on the first function it compiles: a start does not load esbuild (issue #38). */
export const build: typeof import('esbuild').build = async (options) => (await import('esbuild')).build(options);
