import type { Argv, CommandModule } from 'yargs';
import type { GlobalArgs } from '../../../platform/cli-options.js';
import { annotateCommand } from './annotate.js';
import { dialoguesCommand } from './dialogues.js';
import { importLegacyCommand } from './import-legacy.js';
import { importCommand } from './import.js';
import { judgeCommand } from './judge.js';
import { promptsCommand } from './prompts.js';
import { scenariosCommand } from './scenarios.js';

/**
 * PersonaLens's stages under the benchmark's name, as PERSONA-bench's are under `plens
 * persona-bench`: `plens personalens dialogues ...` is `plens dialogues ...`. The top-level
 * commands stay, as aliases that existing scripts and docs use.
 */
export const personalensCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'personalens <command>',
  describe: 'PersonaLens: its stages (import, scenarios, dialogues, judge, prompts, annotate, import-legacy), also available as top-level commands',
  builder: (y: Argv<GlobalArgs>) =>
    y
      .command(importCommand)
      .command(importLegacyCommand)
      .command(scenariosCommand)
      .command(dialoguesCommand)
      .command(judgeCommand)
      .command(promptsCommand)
      .command(annotateCommand)
      .demandCommand(1, 'Name a PersonaLens stage: import, import-legacy, scenarios, dialogues, judge, prompts or annotate.'),
  handler: () => undefined,
};
