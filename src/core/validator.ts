import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type Ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { PlensError, type InputLocation } from './errors.js';
import { schemasDir } from './paths.js';

export type SchemaId =
  | 'plens:upstream-profile'
  | 'plens:upstream-user-tasks'
  | 'plens:upstream-situations'
  | 'plens:upstream-task-definition'
  | 'plens:upstream-preference-schema'
  | 'plens:scenario'
  | 'plens:scenario-selection'
  | 'plens:manifest'
  | 'plens:pipeline';

let ajv: Ajv2020.default | undefined;
const compiled = new Map<SchemaId, ValidateFunction>();

function instance(): Ajv2020.default {
  if (ajv) return ajv;
  // allErrors off: the first error is the one we report, and validation stays fast on 122k records.
  // unicodeRegExp off: every schema pattern is ASCII (no \p{...}, no '.'), which matches alike without
  // the u flag, and the import's 122k task keys and ids are checked about a tenth faster.
  // validateSchema off: checking our own schemas against the 2020-12 meta-schema took two thirds of
  // every process's and import thread's start (75 ms); a test checks them instead.
  // Loaded on first use (ajv is CommonJS, so synchronously): most commands never validate, and loading
  // it cost every CLI start 50 ms.
  const Ajv = (createRequire(import.meta.url)('ajv/dist/2020.js') as typeof Ajv2020).default;
  ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true, unicodeRegExp: false, validateSchema: false });
  for (const name of readdirSync(schemasDir)
    .filter((f) => f.endsWith('.schema.json'))
    .sort()) {
    ajv.addSchema(JSON.parse(readFileSync(join(schemasDir, name), 'utf8')));
  }
  return ajv;
}

export function validatorFor(id: SchemaId): ValidateFunction {
  let fn = compiled.get(id);
  if (!fn) {
    fn = instance().getSchema(id);
    if (!fn) throw new PlensError('E_INTERNAL', `schema ${id} is missing from ${schemasDir}`);
    compiled.set(id, fn);
  }
  return fn;
}

/** What the first ajv error expected, in words a user can act on. */
export function describeSchemaError(error: ErrorObject, data: unknown): string {
  const actual = valueAt(data, error.instancePath);
  const got = actual === undefined ? '' : ` (got ${describeValue(actual)})`;
  switch (error.keyword) {
    case 'required':
      return `missing required field "${(error.params as { missingProperty: string }).missingProperty}"`;
    case 'additionalProperties':
      return `unexpected field "${(error.params as { additionalProperty: string }).additionalProperty}"`;
    case 'type':
      return `expected ${(error.params as { type: string }).type}${got}`;
    case 'enum':
      return `expected one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}${got}`;
    case 'pattern':
      return `expected a string matching ${(error.params as { pattern: string }).pattern}${got}`;
    case 'propertyNames':
      return `invalid key "${(error.params as { propertyName: string }).propertyName}"`;
    case 'anyOf':
      return `expected a string or a list of strings${got}`;
    default:
      return `${error.message ?? 'invalid'}${got}`;
  }
}

export function assertValid<T>(id: SchemaId, data: unknown, location: InputLocation): asserts data is T {
  check(validatorFor(id), data, location);
}

const compiledObjects = new WeakMap<object, ValidateFunction>();

/**
 * Checks a value against a schema given as an object (a plug-in's own, not a file of schemas/),
 * compiled once per object; errors as assertValid's, at `location.pointer` + the field's.
 */
export function validateWith(schema: object, data: unknown, location: InputLocation): void {
  let fn = compiledObjects.get(schema);
  if (!fn) {
    fn = instance().compile(schema);
    compiledObjects.set(schema, fn);
  }
  check(fn, data, location);
}

function check(validate: ValidateFunction, data: unknown, location: InputLocation): void {
  if (validate(data)) return;
  const errors = validate.errors ?? [];
  const first = pickError(errors);
  const key = (first as ErrorObject & { propertyName?: string }).propertyName;
  // A bad key is reported at the key itself, not at the object holding it.
  const pointer = key !== undefined ? `${first.instancePath}/${escapePointer(key)}` : first.instancePath;
  const message =
    key !== undefined
      ? `invalid key "${key}": ${describeSchemaError({ ...first, instancePath: pointer }, data).replace(/ \(got .*\)$/, '')}`
      : describeSchemaError(first, data);
  throw new PlensError('E_INPUT_SCHEMA', message, {
    location: { ...location, pointer: (location.pointer ?? '') + pointer },
  });
}

/**
 * ajv (allErrors off) lists the failures of each anyOf branch before the anyOf itself;
 * the anyOf says what was really expected, so it wins at the same location.
 */
function pickError(errors: ErrorObject[]): ErrorObject {
  const first = errors[0]!;
  const anyOf = errors.find((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath);
  return anyOf ?? first;
}

export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let cur: unknown = data;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? text.slice(0, 37) + '...' : text}`;
}
