// The error codes of each area; `../catalogue.ts` joins them into the one catalogue.
export { AI_ERRORS } from './ai.js';
export { AUTH_ERRORS } from './auth.js';
export { AUTOMATION_ERRORS } from './automation.js';
export { DATA_ERRORS } from './data.js';
export { FUNCTIONS_ERRORS } from './functions.js';
export { OPERATIONS_ERRORS } from './operations.js';
export { REQUEST_ERRORS } from './request.js';
export { STORAGE_ERRORS } from './storage.js';
