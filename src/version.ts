import { readFileSync } from 'node:fs';

/** This release of Plinth (package.json's version). */
export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
