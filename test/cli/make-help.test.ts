import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('plens make --help', () => {
  it("lists every registered benchmark's steps as targets", async () => {
    const r = await runCli(['make', '--help']);
    expect(r.code).toBe(0);
    const text = r.stdout.replace(/\s+/g, ' ');
    for (const step of ['build-situations', 'import', 'dialogues', 'select', 'predictions', 'prefeval-mcq', 'prefeval-checks']) expect(text).toContain(step);
    expect(text).toContain('every pipeline: warehouse, tables');
  });
});
