import { AppError } from '../errors/index.js';
import type { Queryable } from '../db/types.js';
import { safe } from './ident.js';
import { RelationsCache } from './relations.js';
import { SchemaCache } from './schema.js';

/** The relations and keys of one exposed schema. */
export interface Scope {
  schema: SchemaCache;
  relations: RelationsCache;
}

/**
 * The schema caches of the exposed schemas (`DB_SCHEMAS`, default public): public's is the
 * one the rest of Plinth shares; the others are made on first use and forgotten whenever
 * public's is (this instance's DDL and admin SQL invalidate public's cache).
 */
export class Scopes {
  private readonly pub: Scope;
  private readonly others = new Map<string, Scope & { seen: string }>();

  constructor(
    private readonly db: Queryable,
    schema: SchemaCache,
    readonly exposed: readonly string[] = ['public'],
  ) {
    this.pub = { schema, relations: new RelationsCache(db, schema) };
  }

  get(name = 'public'): Scope {
    if (name === 'public') return this.pub;
    if (!this.exposed.includes(name)) throw notExposed(name, this.exposed);
    let s = this.others.get(name);
    if (!s) {
      const schema = new SchemaCache(this.db, 1000, name);
      s = { schema, relations: new RelationsCache(this.db, schema), seen: this.pub.schema.version };
      this.others.set(name, s);
    }
    if (s.seen !== this.pub.schema.version) {
      s.schema.invalidate();
      s.seen = this.pub.schema.version;
    }
    return s;
  }
}

export function notExposed(name: string, exposed: readonly string[]): AppError {
  return new AppError('SCHEMA_NOT_EXPOSED', {
    message: `Schema "${safe(name)}" is not exposed; the exposed schemas are: ${exposed.join(', ')}.`,
    hint: `Only the following schemas are exposed: ${exposed.join(', ')}`,
    pgrstCode: 'PGRST106',
  });
}
