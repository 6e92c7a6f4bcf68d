/**
 * The one catalogue of error codes. A throw site names a code; the status, default message
 * and next action come from here. The codes are kept per area in `codes/`; `docs/errors.md`
 * is generated from this table (`npm run docs:errors`) and a test keeps the two in step.
 */
import {
  AI_ERRORS,
  AUTH_ERRORS,
  AUTOMATION_ERRORS,
  DATA_ERRORS,
  FUNCTIONS_ERRORS,
  OPERATIONS_ERRORS,
  REQUEST_ERRORS,
  STORAGE_ERRORS,
} from './codes/index.js';
import type { ErrorSpec } from './spec.js';

export type { ErrorSpec } from './spec.js';

export const ERRORS = {
  ...REQUEST_ERRORS,
  ...AUTH_ERRORS,
  ...DATA_ERRORS,
  ...AI_ERRORS,
  ...STORAGE_ERRORS,
  ...FUNCTIONS_ERRORS,
  ...AUTOMATION_ERRORS,
  ...OPERATIONS_ERRORS,
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}
