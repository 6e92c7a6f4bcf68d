/** The environment as read: variable name to raw value. */
export type Env = Record<string, string | undefined>;

/** Collects problems while reading; every parser below reports into it. */
export interface Reader {
  problems: string[];
  env: Env;
  /** Every key looked at, with the default it falls back to (null: none): the effective configuration lists them. */
  read: Map<string, string | null>;
}

/** The value of `key`, trimmed, or undefined when unset or blank; records the key (and `def`) as read. */
export function raw(r: Reader, key: string, def: string | null = null): string | undefined {
  if (def !== null || !r.read.has(key)) r.read.set(key, def);
  const v = r.env[key];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

export function str(r: Reader, key: string): string | null;
export function str(r: Reader, key: string, def: string): string;
export function str(r: Reader, key: string, def?: string): string | null {
  return raw(r, key, def ?? null) ?? def ?? null;
}

export function int(r: Reader, key: string, def: number, min: number, max: number): number {
  const v = raw(r, key, String(def));
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    r.problems.push(`${key} must be a whole number from ${min} to ${max} (got "${v}")`);
    return def;
  }
  return Number(v);
}

export function optInt(r: Reader, key: string, min: number, max: number): number | null {
  return raw(r, key) === undefined ? null : int(r, key, 0, min, max);
}

export function bool(r: Reader, key: string, def: boolean): boolean {
  const v = raw(r, key, String(def))?.toLowerCase();
  if (v === undefined) return def;
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  r.problems.push(`${key} must be true or false (got "${v}")`);
  return def;
}

export function url(r: Reader, key: string, protocols: string[]): string | null {
  const v = raw(r, key);
  if (v === undefined) return null;
  try {
    const u = new URL(v);
    if (!protocols.includes(u.protocol)) throw new Error('protocol');
    return v.replace(/\/+$/, '');
  } catch {
    r.problems.push(`${key} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`);
    return null;
  }
}

export function list(r: Reader, key: string): string[] | null {
  const v = raw(r, key);
  if (v === undefined) return null;
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : null;
}

export function oneOf<T extends string>(r: Reader, key: string, values: readonly T[], def: T): T {
  const v = raw(r, key, def);
  if (v === undefined) return def;
  if (!(values as readonly string[]).includes(v)) {
    r.problems.push(`${key} must be one of ${values.join(', ')} (got "${v}")`);
    return def;
  }
  return v as T;
}

export function secret(r: Reader, key: string, pattern: RegExp, shape: string): string | null {
  const v = raw(r, key);
  if (v === undefined) return null;
  if (!pattern.test(v)) {
    r.problems.push(`${key} must be ${shape} (leave it unset to have one generated and persisted)`);
    return null;
  }
  return v;
}
