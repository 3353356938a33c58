import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PlensError } from '../../../../core/errors.js';

/** Where the upstream PersonaLens files are, resolved and checked before anything is read. */
export interface UpstreamLayout {
  dataDir: string;
  profileDir: string;
  taskDir: string;
  schemaFile: string;
  users: Array<{ userId: string; index: number; dir: string }>;
}

const USER_DIR = /^user(0|[1-9][0-9]{0,8})$/;

export async function locateUpstream(dataDir: string, schemaOverride?: string): Promise<UpstreamLayout> {
  if (!existsSync(dataDir)) {
    throw new PlensError('E_INPUT_NOT_FOUND', 'data directory does not exist', {
      location: { file: dataDir },
      hint: 'get the data with `git clone https://github.com/amazon-science/PersonaLens` and point --from at its data/ folder (in the shipped pipelines: export PERSONALENS_DATA=../PersonaLens/data)',
    });
  }
  if (!statSync(dataDir).isDirectory()) {
    throw new PlensError('E_INPUT_LAYOUT', 'expected a directory holding profile/ and task/', { location: { file: dataDir } });
  }
  const profileDir = join(dataDir, 'profile');
  const taskDir = join(dataDir, 'task');
  for (const dir of [profileDir, taskDir]) {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new PlensError('E_INPUT_LAYOUT', `missing directory ${dir.slice(dataDir.length + 1)}/ (the upstream layout has profile/ and task/)`, {
        location: { file: dataDir },
        hint: 'point --from at the PersonaLens data/ directory, e.g. ../shared/personalens/data',
      });
    }
  }
  const schemaFile = schemaOverride ?? [join(dataDir, 'res', 'schema.json'), join(dirname(dataDir), 'res', 'schema.json')].find((f) => existsSync(f));
  if (!schemaFile || !existsSync(schemaFile)) {
    throw new PlensError('E_INPUT_NOT_FOUND', 'preference schema not found', {
      location: { file: schemaOverride ?? join(dataDir, 'res', 'schema.json') },
      hint: 'looked in <from>/res/schema.json and <from>/../res/schema.json; give it with --schema',
    });
  }

  const users: UpstreamLayout['users'] = [];
  for (const entry of await readdir(profileDir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const match = USER_DIR.exec(entry.name);
    if (!match || !entry.isDirectory()) {
      throw new PlensError('E_INPUT_LAYOUT', `unexpected entry "${entry.name}": profile/ holds only directories named user<N>`, {
        location: { file: join(profileDir, entry.name) },
      });
    }
    users.push({ userId: entry.name, index: Number(match[1]), dir: join(profileDir, entry.name) });
  }
  if (users.length === 0) {
    throw new PlensError('E_INPUT_LAYOUT', 'no user directories (user<N>/) in profile/', { location: { file: profileDir } });
  }
  users.sort((a, b) => a.index - b.index);
  return { dataDir, profileDir, taskDir, schemaFile, users };
}
