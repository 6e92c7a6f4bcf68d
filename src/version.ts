import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './lib/code-dir.js';

/** This release of Plinth (package.json's version). */
export const VERSION: string = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).version;
