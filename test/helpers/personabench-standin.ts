import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ORIGINAL_PROMPT_FILES } from '../../src/benchmarks/personabench/import-prompts.js';
import { ORIGINAL_MAKERS } from '../../src/benchmarks/personabench/original-makers.js';
import { tempDir } from './cli.js';

/**
 * A stand-in for a checkout of the PERSONA-bench original: each PromptMakers/ script is a few
 * lines of our own Python that write one record per output file, holding what the script was
 * given (a draw from the seeded random, the API-key variables it sees, the input's size), so a
 * test sees how plens runs scripts. `behaviour` replaces a script's body. Not the original.
 */
const LABELS = { '3.1': 'positive', '3.2': 5, '3.3': 't' } as const;

export function standIn(behaviour: Record<string, string> = {}): string {
  const root = tempDir('plens-pb-standin-');
  mkdirSync(join(root, 'PromptMakers'));
  for (const maker of ORIGINAL_MAKERS) {
    const body =
      behaviour[maker.script] ??
      [
        'import json, os, random',
        'data = open("merged_posts_remapped.json", encoding="utf-8").read()',
        ...maker.outputs.map(
          (name) =>
            `open(${JSON.stringify(name)}, "w").write(json.dumps({"prompt": "p", "true_label": ${JSON.stringify(LABELS[ORIGINAL_PROMPT_FILES[name]!.task])}, "user": "u", "subreddit": "s", "draw": random.random(), "env": sorted(k for k in os.environ if "KEY" in k), "size": len(data)}) + "\\n")`,
        ),
      ].join('\n');
    writeFileSync(join(root, 'PromptMakers', maker.script), body + '\n');
  }
  writeFileSync(
    join(root, 'Raw_Data_Process.py'),
    'import json\nposts = json.load(open("Raw_Data_Postized.json"))\ng = {}\nfor p in posts: g.setdefault(p.get("author"), []).append(p)\njson.dump(g, open("merged_posts_remapped.json", "w"))\n',
  );
  return root;
}
