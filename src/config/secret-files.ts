// `<NAME>_FILE`: a secret read from a file instead of the environment, as Docker and Kubernetes
// secrets are mounted (/run/secrets/<name>, a Secret volume). Every credential Plinth reads
// (ADMIN_API_KEY, JWT_SECRET, S3_SECRET_ACCESS_KEY, OAUTH_<NAME>_CLIENT_SECRET …) and the URLs
// that carry a password (DATABASE_URL, REDIS_URL, SMTP_URL) have one.
import { readFileSync } from 'node:fs';
import { isSecretVariable } from './effective.js';
import type { Env } from './reader.js';

/** The URLs that may carry a password; the secrets themselves are found by isSecretVariable. */
const URL_VARIABLES: ReadonlySet<string> = new Set(['DATABASE_URL', 'REDIS_URL', 'SMTP_URL']);

/** Whether `NAME_FILE` is honoured for `name`. */
export function hasFileVariant(name: string): boolean {
  return URL_VARIABLES.has(name) || isSecretVariable(name);
}

/** Files larger than this are not a secret (a mistaken path such as a log or a disk image). */
const MAX_SECRET_BYTES = 64 * 1024;

/**
 * `env` with every honoured `NAME_FILE` replaced by `NAME` set to the file's content (without
 * its trailing newline). Problems (both set, an unreadable, empty or huge file) go to `problems`,
 * one line each naming the variable and the path. The returned `files` lists the `_FILE`
 * variables used, for the effective configuration.
 */
export function withSecretFiles(env: Env, problems: string[]): { env: Env; files: string[] } {
  const out: Env = { ...env };
  const files: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    if (!key.endsWith('_FILE') || value === undefined || value.trim() === '') continue;
    const name = key.slice(0, -'_FILE'.length);
    if (!hasFileVariant(name)) continue;
    files.push(key);
    if (env[name] !== undefined && env[name].trim() !== '') {
      problems.push(`${name} and ${key} are both set: set one of them`);
      continue;
    }
    const content = readSecretFile(key, value.trim(), problems);
    if (content !== null) out[name] = content;
  }
  return { env: out, files };
}

function readSecretFile(key: string, file: string, problems: string[]): string | null {
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_SECRET_BYTES) {
      problems.push(`${key}: ${file} is larger than 64 KiB, which no secret is`);
      return null;
    }
    text = bytes.toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable by this user' : String(code);
    problems.push(`${key}: ${file} ${code === 'EISDIR' ? 'is a directory, not a file' : why}`);
    return null;
  }
  const value = text.replace(/[\r\n]+$/, '');
  if (value.trim() === '') {
    problems.push(`${key}: ${file} is empty`);
    return null;
  }
  if (/[\r\n]/.test(value)) {
    problems.push(`${key}: ${file} holds more than one line; a secret file holds the value alone`);
    return null;
  }
  return value;
}
