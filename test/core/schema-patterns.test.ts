import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

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
  const dir = join(repoRoot, 'schemas');
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.schema.json'))
    .flatMap((f) => patterns(JSON.parse(readFileSync(join(dir, f), 'utf8'))).map((p) => ({ f, p })));
  expect(all.length).toBeGreaterThan(3);
  for (const { f, p } of all) {
    expect(p, f).toMatch(/^[\x20-\x7e]*$/);
    expect(p, f).not.toMatch(/\\[pPu]\{/);
    // A '.' outside a bracket expression (inside one it is a plain dot).
    expect(p.replace(/\[(?:\\.|[^\]])*\]/g, ''), f).not.toMatch(/(^|[^\\])\./);
  }
});
