/**
 * Defaults of what the PersonaLens stages compute, shared by their flags and their pipeline
 * section. (The judge's default dimensions belong to the judge stage, which applies them when
 * none are given.)
 */
export const STAGE_DEFAULTS = {
  /** Dialogues per scenario and cell. */
  replicates: 1,
  /** Ask the judge once more when its reply does not parse. */
  reask: false,
} as const;
