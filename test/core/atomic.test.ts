import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replaceDirectoryAtomic, writeFileAtomic } from '../../src/core/atomic.js';
import { tempDir } from '../helpers/cli.js';

describe('replaceDirectoryAtomic', () => {
  it('swaps in the new directory and removes the old one', async () => {
    const root = tempDir();
    const target = join(root, 'dataset');
    mkdirSync(target);
    writeFileSync(join(target, 'old.txt'), 'old');
    await replaceDirectoryAtomic(target, async (staging) => writeFileSync(join(staging, 'new.txt'), 'new'));
    expect(readdirSync(target)).toEqual(['new.txt']);
    expect(readdirSync(root)).toEqual(['dataset']);
  });

  it('keeps the previous directory untouched and leaves no temp files when the build fails', async () => {
    const root = tempDir();
    const target = join(root, 'dataset');
    mkdirSync(target);
    writeFileSync(join(target, 'old.txt'), 'old');
    await expect(
      replaceDirectoryAtomic(target, async (staging) => {
        writeFileSync(join(staging, 'half.txt'), 'half');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(readdirSync(target)).toEqual(['old.txt']);
    expect(readdirSync(root)).toEqual(['dataset']);
  });

  it('creates the directory when none existed', async () => {
    const root = tempDir();
    await replaceDirectoryAtomic(join(root, 'a', 'b'), async (staging) => writeFileSync(join(staging, 'x'), '1'));
    expect(existsSync(join(root, 'a', 'b', 'x'))).toBe(true);
  });
});

describe('writeFileAtomic', () => {
  it('writes the file and leaves no temp sibling', async () => {
    const root = tempDir();
    await writeFileAtomic(join(root, 'sub', 'f.txt'), 'hello');
    expect(readFileSync(join(root, 'sub', 'f.txt'), 'utf8')).toBe('hello');
    expect(readdirSync(join(root, 'sub'))).toEqual(['f.txt']);
  });
});
