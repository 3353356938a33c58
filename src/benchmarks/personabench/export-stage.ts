/**
 * `plens persona export`: the selection and its prompts written in the original's formats, for
 * the original's own tools or anyone who reads its files: `merged_posts_remapped.json` (the
 * grouped input exactly as Raw_Data_Process.py writes it) and the nine prompt files under the
 * makers' names and line layouts (original-layout.ts), with plens's prompt text, or with the
 * original's where the prompts come from `--prompts` (e.g. `select --original`'s prompts.jsonl).
 */
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { replaceDirectoryAtomic } from '../../core/atomic.js';
import { PlensError } from '../../core/errors.js';
import { pythonJsonDumps } from '../../core/python-format.js';
import { promptRecord, type PromptRecord } from './build-prompts.js';
import { readPersonaUsers } from './import.js';
import { toPython } from './maker-json.js';
import { LAYOUT_FILES, originalLine } from './original-layout.js';
import { PromptCorpus } from './prompt-corpus.js';
import { selectAll, type Fidelity } from './selection.js';

export interface PersonaExportOptions {
  from: string;
  out: string;
  fidelity: Fidelity;
  seed: number;
  /** Prompt records to export instead of building plens's own (a prompts.jsonl of the same input). */
  prompts?: string;
  /** Replace files of these names that an earlier export did not write. */
  force?: boolean;
  dryRun?: boolean;
}

export interface PersonaExportSummary {
  dry_run: boolean;
  out: string;
  fidelity: Fidelity;
  seed: number;
  prompts: 'plens' | string;
  files: Array<{ name: string; lines: number }>;
}

const GROUPED = 'merged_posts_remapped.json';
const MARKER = '.plens-export.json';

export async function runPersonaExport(options: PersonaExportOptions): Promise<PersonaExportSummary> {
  const { users } = await readPersonaUsers(options.from);
  const corpus = new PromptCorpus(users);
  let records: PromptRecord[];
  if (options.prompts) records = await readRecords(options.prompts);
  else {
    const { score, reply } = selectAll(users, { fidelity: options.fidelity, seed: options.seed });
    records = [...score, ...reply].map((sample) => promptRecord(sample, corpus, options.fidelity));
  }
  const byFile = LAYOUT_FILES.map((f) => ({ ...f, records: records.filter((r) => r.task === f.task && r.setting === f.setting) }));
  const summary: PersonaExportSummary = {
    dry_run: options.dryRun === true,
    out: options.out,
    fidelity: options.fidelity,
    seed: options.seed,
    prompts: options.prompts ?? 'plens',
    files: [{ name: GROUPED, lines: 1 }, ...byFile.map((f) => ({ name: f.name, lines: f.records.length }))],
  };
  if (options.dryRun) return summary;
  guardOverwrite(options.out, options.force === true);
  await replaceDirectoryAtomic(
    options.out,
    async (staging) => {
      // Raw_Data_Process.py: json.dump(grouped, indent=2, ensure_ascii=False).
      const grouped = new Map(users.map((u) => [u.user, u.posts.map((p) => toPython(p))]));
      await writeFile(join(staging, GROUPED), pythonJsonDumps(grouped, { indent: 2, ensureAscii: false }));
      for (const f of byFile) {
        // The makers: json.dumps(item) + '\n' per line.
        const text = f.records.map((r) => `${pythonJsonDumps(originalLine(r, corpus))}\n`).join('');
        await writeFile(join(staging, f.name), text);
      }
      await writeFile(join(staging, MARKER), `${JSON.stringify({ written_by: 'plens persona export', files: summary.files.map((f) => f.name) }, null, 2)}\n`);
    },
    { ownOnly: true },
  );
  return summary;
}

/** Files of these names that plens did not write (no marker) are the user's: kept unless --force. */
function guardOverwrite(out: string, force: boolean): void {
  if (force || !existsSync(out) || existsSync(join(out, MARKER))) return;
  const names = new Set([GROUPED, ...LAYOUT_FILES.map((f) => f.name)]);
  const clash = readdirSync(out).filter((name) => names.has(name));
  if (clash.length)
    throw new PlensError('E_USAGE', `${out} already holds ${clash.length} file(s) of the original's names that plens did not write (e.g. ${clash[0]})`, {
      hint: 'export to another folder, or pass --force to replace them',
    });
}

async function readRecords(file: string): Promise<PromptRecord[]> {
  const out: PromptRecord[] = [];
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (text.trim() === '') continue;
      try {
        out.push(JSON.parse(text) as PromptRecord);
      } catch (error) {
        throw new PlensError('E_INPUT_JSON', `not valid JSON: ${(error as Error).message}`, { location: { file, line: n }, cause: error });
      }
    }
  } catch (error) {
    if (error instanceof PlensError) throw error;
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read the prompt records: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      location: { file },
      hint: 'pass the prompts.jsonl that plens persona select wrote for this same input',
      cause: error,
    });
  }
  return out;
}
