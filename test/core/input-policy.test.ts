import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, repoRoot, sampleDir, tempDir } from '../helpers/cli.js';

/*
 * One input policy for every reader: bytes that are not UTF-8, lone UTF-16 surrogates, duplicate
 * keys (one JSON.parse would silently keep the last) and nesting deeper than any plens input are
 * refused with the file and line; a leading byte-order mark is read past (RFC 8259 lets a parser
 * ignore it, and TextDecoder does), and \u0000 escapes are text (valid JSON, which Python's json
 * reads too). Tested the same way on the PersonaLens
 * import (profile.json), the PERSONA-bench import (a grouped posts file) and, for the encoding, the
 * import of the original's Python files.
 */
const POST = '{"title": "t", "content": "c", "author": "alice", "score": 1, "timestamp": "2023-03-01T10:00:00Z", "comments": []}';

type Variant = 'bad-utf8' | 'lone-surrogate' | 'duplicate-key' | 'too-deep' | 'bom' | 'nul';
const REFUSED: Record<Exclude<Variant, 'bom' | 'nul'>, RegExp> = {
  'bad-utf8': /E_INPUT_ENCODING: .*:\d+.*not valid UTF-8/,
  'lone-surrogate': /E_INPUT_ENCODING: .*lone UTF-16 surrogate/,
  'duplicate-key': /E_INPUT_JSON: .*:\d+.*duplicate key/,
  'too-deep': /E_INPUT_JSON: .*:\d+.*nested deeper than 1000 levels/,
};

/** A JSON text of one reader's shape, spoiled as `variant` says. */
function spoil(json: string, variant: Variant): Buffer {
  const at = json.lastIndexOf('}');
  switch (variant) {
    case 'bad-utf8':
      return Buffer.concat([Buffer.from(json.slice(0, at)), Buffer.from(', "x": "a'), Buffer.from([0xff]), Buffer.from(`"${json.slice(at)}`)]);
    case 'lone-surrogate':
      return Buffer.from(`${json.slice(0, at)}, "x": "\\ud800"${json.slice(at)}`);
    case 'duplicate-key':
      return Buffer.from(`${json.slice(0, at)}, "x": 1,\n "x": 2${json.slice(at)}`);
    case 'too-deep':
      return Buffer.from(`${json.slice(0, at)}, "x": ${'['.repeat(1200)}${']'.repeat(1200)}${json.slice(at)}`);
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
    case 'nul': {
      // Into a free-text value the reader keeps (a past-interaction summary, a post's content).
      const key = json.includes('"interactions"') ? json.indexOf('": "', json.indexOf('"interactions"')) : json.indexOf('"content": "') + 9;
      return Buffer.from(`${json.slice(0, key + 4)}a\\u0000b ${json.slice(key + 4)}`);
    }
  }
}

const VARIANTS: Variant[] = ['bad-utf8', 'lone-surrogate', 'duplicate-key', 'too-deep', 'bom', 'nul'];

describe('one input policy for every reader', () => {
  it.each(VARIANTS)('plens import (PersonaLens profile.json): %s', async (variant) => {
    const data = join(tempDir('plens-policy-pl-'), 'data');
    cpSync(sampleDir, data, { recursive: true });
    const file = join(data, 'profile', 'user1', 'profile.json');
    writeFileSync(file, spoil(readFileSync(file, 'utf8'), variant));
    const r = await runCli(['import', '--from', data, '-w', join(data, '..', 'ws'), '--dry-run']);
    if (variant === 'bom' || variant === 'nul') expect(r.code, r.stderr).toBe(0);
    else {
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(REFUSED[variant]);
      expect(r.stderr).toContain(file);
    }
  });

  it.each(VARIANTS)('plens persona import (a grouped posts file): %s', async (variant) => {
    const dir = tempDir('plens-policy-pb-');
    const file = join(dir, 'posts.json');
    // The spoiled value goes into the post, the member the streaming reader parses.
    const grouped = `{\n"alice": [${spoil(POST, variant).toString('latin1')}]\n}`;
    writeFileSync(file, Buffer.from(grouped, 'latin1'));
    if (variant === 'bom') writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{\n"alice": [${POST}]\n}`)]));
    const r = await runCli(['persona', 'import', '--from', file, '-w', join(dir, 'ws')]);
    if (variant === 'bom' || variant === 'nul') expect(r.code, r.stderr).toBe(0);
    else {
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(REFUSED[variant]);
      // Where: the line, or the JSON pointer of the value.
      expect(r.stderr).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(:[23]|#/alice/0/x)`));
    }
  });

  it('plens persona import: an author given twice is refused, not merged', async () => {
    const file = join(tempDir('plens-policy-pb-'), 'posts.json');
    writeFileSync(file, `{"alice": [${POST}],\n"alice": [${POST}]}`);
    const r = await runCli(['persona', 'import', '--from', file, '-w', join(file, '..', 'ws')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/posts\.json:2 \/alice: duplicate key "alice"/);
  });

  it('plens prompts import-original: a Python file that is not UTF-8 is refused, never read as U+FFFD', async () => {
    const checkout = join(tempDir('plens-policy-orig-'), 'repo');
    cpSync(join(repoRoot, 'test', 'fixtures', 'personalens-original'), checkout, { recursive: true });
    const file = join(checkout, 'util', 'evaluation_prompts.py');
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('\nZ = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]));
    mkdirSync(join(checkout, 'out'), { recursive: true });
    const r = await runCli(['prompts', 'import-original', checkout, '--out', join(checkout, 'set')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/E_INPUT_ENCODING: .*evaluation_prompts\.py:\d+:\d+: not valid UTF-8: byte 0xe9/);
  });
});

it('a directory where an input file is expected is named in the error (persona import and select)', async () => {
  const dir = tempDir('plens-policy-dir-');
  for (const command of ['import', 'select']) {
    const r = await runCli(['persona', command, '--from', dir, '-w', join(dir, 'ws')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${dir}: a directory, where a file was expected`);
    expect(r.stderr).not.toContain('E_INTERNAL');
  }
});
