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

/** Every "pattern" in a schema, however deep. */
function patterns(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const v of node) patterns(v, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'pattern' && typeof v === 'string') out.push(v);
      else patterns(v, out);
    }
  }
  return out;
}

// src/core/validator.ts compiles the patterns without the u flag: that matches alike only for ASCII
// patterns without Unicode-mode syntax (property classes, code point escapes) or '.' (which would
// match one half of a surrogate pair).
it('every schema pattern is plain ASCII, so it matches alike with or without the u flag', () => {
  const all = schemaFiles().flatMap(({ f, schema }) => patterns(schema).map((p) => ({ f, p })));
  expect(all.length).toBeGreaterThan(3);
  for (const { f, p } of all) {
    expect(p, f).toMatch(/^[\x20-\x7e]*$/);
    expect(p, f).not.toMatch(/\\[pPu]\{/);
    // A '.' outside a bracket expression (inside one it is a plain dot).
    expect(p.replace(/\[(?:\\.|[^\]])*\]/g, ''), f).not.toMatch(/(^|[^\\])\./);
  }
});
