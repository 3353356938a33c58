import { execFileSync, execSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, repoRoot, tempDir } from '../helpers/cli.js';

/*
 * tsc writes dist/cli/main.js as 644; in a fresh clone (nothing built before) `npx plens` then
 * answered "Permission denied". The build's postbuild step sets the execute bit.
 */
describe('the plens bin', () => {
  const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('the postbuild step makes a freshly written dist/cli/main.js executable', () => {
    // As in a fresh clone: the file tsc just wrote, mode 644, in a folder of its own.
    const dir = tempDir('plens-bin-');
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    const file = join(dir, 'dist', 'cli', 'main.js');
    writeFileSync(file, '#!/usr/bin/env node\nconsole.log("ran");\n');
    chmodSync(file, 0o644);
    expect(scripts['postbuild']).toBeDefined();
    execSync(scripts['postbuild']!, { cwd: dir, stdio: 'pipe' });
    expect(statSync(file).mode & 0o777).toBe(0o755);
    expect(execFileSync(file, { encoding: 'utf8' })).toBe('ran\n');
  });

  it('the built CLI in this checkout runs as a program (npm test builds first)', () => {
    expect(statSync(cliPath).mode & 0o111).toBe(0o111);
    expect(execFileSync(cliPath, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
