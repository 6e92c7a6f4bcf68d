import type { ErrorSpec } from '../spec.js';

/** Functions and their runtime. */
export const FUNCTIONS_ERRORS = {
  // functions
  FUNCTION_NOT_FOUND: {
    status: 404,
    message: 'No such function, or it is not active.',
    nextActions: 'Check the slug; GET /api/functions lists functions and their status (only active ones run).',
  },
  INVALID_CODE_SYNTAX: {
    status: 400,
    message: 'The function code has a syntax error.',
    nextActions: 'Fix the code at the line and column given, then save it again.',
  },
  INVALID_FUNCTION_CODE: {
    status: 400,
    message: 'The function code is not a valid function module.',
    nextActions: 'Export a default async function that takes a Request and returns a Response.',
  },
  FUNCTION_CODE_TOO_LARGE: {
    status: 413,
    message: 'The function code is too large.',
    nextActions: 'Keep function code under 1 MiB; move data out of the code.',
  },
  FUNCTION_IMPORT_NOT_FOUND: {
    status: 400,
    message: 'An import of the function does not exist.',
    nextActions:
      'Check the specifier named in the message: the package name, the version or range, the path (npm:name@range/sub/path, jsr:@scope/name, https://host/path).',
  },
  FUNCTION_IMPORT_NOT_ALLOWED: {
    status: 400,
    message: 'The function imports from a place it may not.',
    nextActions:
      'Import npm:, jsr: and node: specifiers, or https: URLs of the hosts in FUNCTION_IMPORT_HOSTS (an operator setting); a function is one file, so no relative or file imports.',
  },
  FUNCTION_IMPORT_FAILED: {
    status: 400,
    message: 'An import of the function could not be bundled.',
    nextActions:
      'Read the message: it names the module and the line; pin another version of that package, or fix the code.',
  },
  FUNCTION_REGISTRY_UNAVAILABLE: {
    status: 503,
    message: 'The package registry could not be reached in time.',
    nextActions:
      'Try again shortly; functions whose imports are already cached deploy without it. The operator can check NPM_CONFIG_REGISTRY, the proxy settings and FUNCTION_BUNDLE_TIMEOUT_SECONDS.',
  },
  FUNCTION_BUNDLE_TOO_LARGE: {
    status: 413,
    message: 'The function with its imports is too large.',
    nextActions:
      'Import fewer or smaller packages (a sub path such as npm:pkg/sub often helps), or ask the operator to raise FUNCTION_BUNDLE_MAX_MB.',
  },
  FUNCTION_ERROR: {
    status: 500,
    message: 'The function threw an error.',
    nextActions: 'An admin can read the error in GET /api/functions/{slug}/logs.',
  },
  FUNCTION_MEMORY_LIMIT: {
    status: 500,
    message: 'The function exceeded its memory limit and was restarted.',
    nextActions: 'Use less memory per request, or ask the operator to raise FUNCTION_MEMORY_MB.',
  },
  FUNCTION_TIMEOUT: {
    status: 504,
    message: 'The function took too long and was stopped.',
    nextActions: 'Make the function finish sooner, or ask the operator to raise FUNCTION_TIMEOUT_MS.',
  },
  FUNCTION_RUNTIME_UNAVAILABLE: {
    status: 502,
    message: 'The function runtime could not be reached.',
    nextActions: 'Try again shortly; GET /api/health?checks=true shows the runtime status.',
  },
  SECRET_NOT_FOUND: {
    status: 404,
    message: 'No such secret.',
    nextActions: 'Check the name; GET /api/secrets lists secrets.',
  },
} as const satisfies Record<string, ErrorSpec>;
