import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// Fastify compiles every route's validators (Ajv) and response serializers
// (fast-json-stringify) when the app becomes ready: about a second of CPU for Plinth's
// routes, most of a start on an existing data dir (issue #38). These factories compile each
// one on its first use instead, so a start pays only for what it serves; the compiled
// function is the same, and it is kept for every later request. `schemaCompilers(true)`
// compiles each one as its route is added, as Fastify does by itself: a test builds the app
// that way, so a schema Ajv or fast-json-stringify cannot compile still fails a test run.

type Route = { httpPart?: string };
type Compile = (route: Route) => unknown;
/** What Fastify reads of an Ajv validator: called with the data, `errors` after a failure, `schemaEnv`. */
type Validator = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serializer = (data: unknown) => string;

const ajvCompilers = AjvCompiler();
const AJV_BASE = { removeAdditional: false, useDefaults: true, allErrors: false };

/**
 * A validator that compiles on its first call. Fastify asks for `schemaEnv` (an Ajv validator
 * is handed its parent so that it may coerce or default the root) and, after a failure, for
 * `errors`: both are read from the compiled validator.
 */
export function lazyValidator(compile: () => Validator): Validator {
  let compiled: Validator | undefined;
  const get = () => {
    compiled ??= compile();
    return compiled;
  };
  const validate = ((data: unknown, ctx?: unknown) => get()(data, ctx)) as Validator;
  Object.defineProperty(validate, 'errors', { get: () => get().errors });
  Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv });
  return validate;
}

/** Fastify's validator factory, with type coercion everywhere but in bodies, compiled on first use. */
export function buildValidator(externalSchemas: never, ajvOptions: object, eager = false): Compile {
  const build = (coerceTypes: 'array' | false) =>
    ajvCompilers(externalSchemas, {
      ...ajvOptions,
      customOptions: { ...AJV_BASE, coerceTypes },
    } as never) as unknown as (route: Route) => Validator;
  const coercing = build('array');
  const strict = build(false);
  const compile = (route: Route) => (route.httpPart === 'body' ? strict(route) : coercing(route));
  return (route) => (eager ? compile(route) : lazyValidator(() => compile(route)));
}

const serializers = SerializerSelector();

/** Fastify's serializer factory (fast-json-stringify), each response schema compiled on first use. */
export function buildSerializer(
  externalSchemas: never,
  serializerOpts: never,
  eager = false,
): (route: never) => Serializer {
  const compile = serializers(externalSchemas, serializerOpts) as unknown as (route: never) => Serializer;
  return (route) => {
    if (eager) return compile(route);
    let compiled: Serializer | undefined;
    return (data) => {
      compiled ??= compile(route);
      return compiled(data);
    };
  };
}

/** The factories for Fastify's schemaController: lazy (a start), or `eager` (every schema compiled as its route is added). */
export function schemaCompilers(eager: boolean) {
  return {
    buildValidator: (externalSchemas: never, ajvOptions: object) => buildValidator(externalSchemas, ajvOptions, eager),
    buildSerializer: (externalSchemas: never, serializerOpts: never) =>
      buildSerializer(externalSchemas, serializerOpts, eager),
  };
}
