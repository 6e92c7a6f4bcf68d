// Writes docs/errors.md from the error catalogue. A test fails when the two differ.
import { writeFileSync } from 'node:fs';
import { renderErrorsDoc } from '../src/errors/doc.js';

writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsDoc());
console.log('docs/errors.md written');
