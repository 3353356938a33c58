import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

const schemaFiles = () => {
  const dir = join(repoRoot, 'schemas');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => ({ f, schema: JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown> }));
};

// src/core/validator.ts skips the meta-schema check at run time (it took most of a process's start):
// every schema is checked here, against the JSON Schema 2020-12 meta-schema, in ajv's strict mode.
it('every schema is valid JSON Schema 2020-12 and compiles in strict mode', () => {
  const ajv = new Ajv2020.default({ strict: true, allowUnionTypes: true });
  const all = schemaFiles();
  expect(all.length).toBeGreaterThan(10);
  for (const { schema } of all) ajv.addSchema(schema);
  for (const { f, schema } of all) {
    expect(ajv.validateSchema(schema), `${f}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
    expect(ajv.getSchema(schema['$id'] as string), f).toBeTypeOf('function');
  }
  // ... and the check is a real one: a misspelt keyword's type fails it.
  expect(ajv.validateSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'strng' })).toBe(false);
});

/** Every regular expression in a schema, however deep: "pattern" values and "patternProperties" keys. */
function patterns(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) patterns(v, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'pattern' && typeof v === 'string') out.push(v);
      else {
        if (k === 'patternProperties' && v !== null && typeof v === 'object') out.push(...Object.keys(v));
        patterns(v, out);
      }
    }
  }
  return out;
}

/**
 * What in a pattern would match differently without the u flag: anything that can match one half of
 * a surrogate pair ('.', a negated class, \S \W \D) or Unicode-mode syntax (\p{...}, \u{...}); null if none.
 */
function unicodeSensitive(p: string): string | null {
  if (!/^[\x20-\x7e]*$/.test(p)) return 'a non-ASCII character';
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      const e = p[++i];
      if ((e === 'p' || e === 'P' || e === 'u') && p[i + 1] === '{') return `\\${e}{`;
      if (e === 'S' || e === 'W' || e === 'D') return `\\${e}`;
    } else if (c === '[') {
      if (p[i + 1] === '^') return 'a negated class';
      for (i++; i < p.length && p[i] !== ']'; i++) if (p[i] === '\\') i++;
    } else if (c === '.') return "'.'";
  }
  return null;
}

// src/core/validator.ts compiles the patterns without the u flag: that matches alike only for ASCII
// patterns that cannot match half a surrogate pair and use no Unicode-mode syntax.
it('every schema pattern matches alike with or without the u flag', () => {
  const all = schemaFiles().flatMap(({ f, schema }) => patterns(schema).map((p) => ({ f, p })));
  expect(all.length).toBeGreaterThan(3);
  for (const { f, p } of all) expect(unicodeSensitive(p), `${f}: ${p}`).toBeNull();
  // The check itself.
  for (const bad of ['^a.b$', '^[^:]+$', '\\S+', '\\p{L}', '^\\\\.$', 'é']) expect(unicodeSensitive(bad), bad).not.toBeNull();
  for (const good of ['^[A-Za-z0-9._-]*$', '^user[0-9]+$', '^a\\.b$', '^[\\]]$']) expect(unicodeSensitive(good), good).toBeNull();
});
