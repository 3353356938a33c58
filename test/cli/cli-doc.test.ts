import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CommandDoc, describeCli, renderCliDoc } from '../../src/cli/cli-doc.js';
import { repoRoot, runCli, runCliInProcess } from '../helpers/cli.js';

/*
 * docs/cli.md is generated from the yargs definitions (npm run docs:cli). It must be what the
 * generator writes now, and the generator must see every command and option that --help shows.
 */

const flatten = (docs: CommandDoc[]): CommandDoc[] => docs.flatMap((d) => [d, ...flatten(d.subcommands)]);

/** The long options a help text lists: lines of its option groups that start with a flag. */
function helpOptions(help: string): string[] {
  const names = new Set<string>();
  for (const line of help.split('\n')) {
    const m = /^\s+(?:-\w, )?--([\w-]+)\s/.exec(line) ?? /^\s+-(\w)\s/.exec(line);
    if (m) names.add(m[1]!);
  }
  names.delete('help');
  names.delete('version');
  return [...names].sort();
}

describe('docs/cli.md', () => {
  it('is what `npm run docs:cli` writes now (run it after changing a command)', () => {
    // The generator as the npm script runs it: the built CLI, in a process of its own, with no
    // PLENS_* variables and an empty working folder, so defaults read as a fresh clone sees them.
    const r = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli', 'cli-doc.js'), '--stdout'], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { ...process.env, PLENS_WAREHOUSE: '/elsewhere.duckdb' },
    });
    expect(r.status, r.stderr).toBe(0);
    const committed = readFileSync(join(repoRoot, 'docs', 'cli.md'), 'utf8');
    expect(committed, 'docs/cli.md is out of date: run `npm run docs:cli`').toBe(r.stdout);
    expect(r.stdout).not.toContain('/elsewhere.duckdb');
  });

  it('--check says up to date, or fails with the command that fixes it when the file differs', () => {
    const generator = join(repoRoot, 'dist', 'cli', 'cli-doc.js');
    const ok = spawnSync(process.execPath, [generator, '--check'], { cwd: repoRoot, encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('docs/cli.md is up to date');
    const dir = mkdtempSync(join(tmpdir(), 'plens-cli-doc-'));
    try {
      const stale = join(dir, 'cli.md');
      writeFileSync(stale, readFileSync(join(repoRoot, 'docs', 'cli.md'), 'utf8').replace('## plens make', '## plens make (edited by hand)'));
      const r = spawnSync(process.execPath, [generator, '--check', '--out', stale], { cwd: dir, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('cli.md is out of date');
      expect(r.stderr).toContain('npm run docs:cli');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('documents every command and every option that --help shows, with its arguments and the exit codes', async () => {
    const cli = await describeCli();
    const all = flatten(cli.commands);
    const paths = all.map((d) => d.path.join(' '));
    for (const expected of [
      'make',
      'status',
      'sql',
      'tables',
      'report',
      'notebook',
      'compare',
      'warehouse',
      'batches drop',
      'stats lexical',
      'persona predict',
      'annotate import',
    ])
      expect(paths).toContain(expected);
    const globals = cli.globalOptions.map((o) => o.name);
    expect(globals).toEqual(expect.arrayContaining(['workspace', 'json', 'quiet']));
    expect(cli.exitCodes.map(([c]) => c)).toEqual(expect.arrayContaining(['0', '1', '2', '3', '4', '5', '6', '130']));

    for (const doc of all) {
      const path = doc.sameAs ?? doc.path;
      const target = all.find((d) => d.path.join(' ') === path.join(' '))!;
      const r = await runCliInProcess([...doc.path, '--help']);
      expect(r.code, `${doc.path.join(' ')} --help: ${r.stderr}`).toBe(0);
      const documented = new Set([...target.options.map((o) => o.name), ...target.options.flatMap((o) => o.aliases), ...globals, 'w', 'q']);
      for (const name of helpOptions(r.stdout))
        expect(documented.has(name), `plens ${doc.path.join(' ')}: --${name} is in --help but not in docs/cli.md`).toBe(true);
      for (const p of target.positionals) expect(r.stdout, `plens ${doc.path.join(' ')}: argument ${p.name}`).toContain(p.name);
    }

    const text = renderCliDoc(cli);
    const make = all.find((d) => d.path.join(' ') === 'make')!;
    expect(text).toContain('## plens make');
    expect(text).toContain('Usage: `plens make [targets..]`');
    const dryRun = make.options.find((o) => o.name === 'dry-run')!;
    expect(dryRun).toMatchObject({ type: 'boolean', default: 'false' });
    expect(text).toMatch(/\| `--dry-run` \| boolean \| `false` \| Print the plan/);
    // A benchmark's stage kept at the top level is documented once and referred to under its benchmark.
    expect(text).toContain('## plens personalens import\n\nThe same command as [plens import](#plens-import).');
  });
});

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** Markdown outside fenced code blocks. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

function anchorsOf(file: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(readFileSync(file, 'utf8')).split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative links of a Markdown file: [file, anchor, line]. */
function linksOf(file: string): Array<{ target: string; anchor: string; line: number }> {
  const out: Array<{ target: string; anchor: string; line: number }> = [];
  let fenced = false;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.startsWith('```')) fenced = !fenced;
      if (fenced) return;
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const href = m[1]!;
        if (/^[a-z]+:/.test(href)) continue;
        const [target, anchor] = href.split('#') as [string, string | undefined];
        out.push({ target, anchor: anchor ?? '', line: i + 1 });
      }
    });
  return out;
}

describe('the README and docs/', () => {
  const readme = join(repoRoot, 'README.md');
  const docs = readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(repoRoot, 'docs', f));

  it('the README is a first page, not a reference: at most 250 lines, one way to run the CLI', () => {
    const text = readFileSync(readme, 'utf8');
    expect(text.split('\n').length).toBeLessThanOrEqual(250);
    // `npx plens ...` works after clone-and-install; a bare `plens ...` does not.
    const bare = text.split('\n').filter((l) => /(^|`)plens [a-z-]/.test(l));
    expect(bare, 'README lines that run a bare `plens`').toEqual([]);
    // What a newcomer needs on the first screen of the path to a real run.
    for (const needed of [
      'Node.js 20.19',
      'npm install',
      'npm run demo',
      '--dry-run',
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'AWS_REGION',
      'PERSONALENS_DATA',
      'docs/README.md',
      'docs/cli.md',
    ])
      expect(text, needed).toContain(needed);
    // No measurement diary: dated figures live in docs/benchmarks.md, written by npm run bench.
    expect(text).not.toMatch(/20\d\d-\d\d-\d\d/);
  });

  it('every relative link of the README and docs/ names a file that exists, and a heading it has', () => {
    const broken: string[] = [];
    for (const file of [readme, ...docs]) {
      for (const { target, anchor, line } of linksOf(file)) {
        const path = target === '' ? file : resolve(dirname(file), target);
        const where = `${relative(repoRoot, file)}:${line}: ${target}${anchor ? `#${anchor}` : ''}`;
        if (!existsSync(path)) broken.push(`${where} (no such file)`);
        else if (anchor && path.endsWith('.md') && !anchorsOf(path).has(anchor)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README's data step holds: a pipeline without its data says where to get it and which variable to set", async () => {
    const r = await runCli(['make', '-p', 'pipelines/dataset-tables.yaml', '--dry-run', '--no-progress'], {
      env: { PERSONALENS_DATA: '/nonexistent/plens-data' },
    });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('/nonexistent/plens-data: data directory does not exist');
    expect(r.stderr).toContain('git clone https://github.com/amazon-science/PersonaLens');
    expect(r.stderr).toContain('PERSONALENS_DATA');
    expect(readFileSync(readme, 'utf8')).toContain('export PERSONALENS_DATA=../PersonaLens/data');
  });

  it('the docs index lists every page of docs/', () => {
    const index = readFileSync(join(repoRoot, 'docs', 'README.md'), 'utf8');
    for (const page of docs.map((f) => relative(join(repoRoot, 'docs'), f)).filter((f) => f !== 'README.md')) expect(index, page).toContain(`(${page})`);
  });
});
