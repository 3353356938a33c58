/**
 * The paper's published results, as numbers, for the report to show beside a run that follows the
 * paper's protocol (report-metadata.ts says when one does).
 *
 * Source: Zheng Zhao, Clara Vania, Subhradeep Kayal, Naila Khan, Shay B. Cohen and Emine Yilmaz
 * (2025), "PersonaLens: A Benchmark for Personalization Evaluation in Conversational AI
 * Assistants". Table 3 (assistants on SD and MD tasks, base setting), Table 11 (model versions)
 * and Appendix B (temperatures). The experiments ran on 50 sampled users: 3,283 SD and 813 MD
 * dialogues.
 */

export const PAPER_CITATION = 'Zhao et al. (2025), PersonaLens: A Benchmark for Personalization Evaluation in Conversational AI Assistants, Table 3';

/** One assistant's row of Table 3: TCR in %, P on 1-4, the assistant's naturalness and coherence on 1-5. */
export interface PaperRow {
  /** The assistant's name in the paper. */
  name: string;
  /** Its model version (Table 11). */
  version: string;
  sd: { tcr: number; p: number; nat: number; coh: number };
  md: { tcr: number; p: number; nat: number; coh: number };
}

export const PAPER_TABLE3: readonly PaperRow[] = [
  {
    name: 'Claude 3 Haiku',
    version: 'claude-3-haiku-20240307',
    sd: { tcr: 95.95, p: 2.2, nat: 3.77, coh: 4.62 },
    md: { tcr: 75.65, p: 1.98, nat: 3.78, coh: 4.66 },
  },
  {
    name: 'Claude 3.5 Haiku',
    version: 'claude-3-5-haiku-20241022',
    sd: { tcr: 91.53, p: 2.32, nat: 4.01, coh: 4.86 },
    md: { tcr: 70.85, p: 2.18, nat: 4.08, coh: 4.88 },
  },
  {
    name: 'Claude 3 Sonnet',
    version: 'claude-3-sonnet-20240229',
    sd: { tcr: 95.98, p: 2.13, nat: 3.86, coh: 4.71 },
    md: { tcr: 77.49, p: 2.01, nat: 3.84, coh: 4.79 },
  },
  {
    name: 'Llama 3.1 8B Instruct',
    version: 'llama3-1-8b-instruct',
    sd: { tcr: 89.55, p: 2.14, nat: 3.9, coh: 4.68 },
    md: { tcr: 77.0, p: 2.03, nat: 3.64, coh: 4.33 },
  },
  {
    name: 'Llama 3.1 70B Instruct',
    version: 'llama3-1-70b-instruct',
    sd: { tcr: 90.8, p: 2.21, nat: 4.11, coh: 4.86 },
    md: { tcr: 83.03, p: 2.22, nat: 4.02, coh: 4.89 },
  },
  {
    name: 'Mistral 7B Instruct',
    version: 'mistral-7b-instruct-v0.2',
    sd: { tcr: 88.52, p: 1.93, nat: 3.49, coh: 4.38 },
    md: { tcr: 74.54, p: 1.86, nat: 3.18, coh: 4.07 },
  },
  {
    name: 'Mixtral 8x7B Instruct',
    version: 'mixtral-8x7b-instruct-v0.1',
    sd: { tcr: 91.38, p: 2.04, nat: 3.88, coh: 4.76 },
    md: { tcr: 78.35, p: 2.0, nat: 3.77, coh: 4.67 },
  },
];

/** The paper's user agent and judge (Table 11) and the temperatures of Appendix B. */
export const PAPER_PROTOCOL = {
  user: { version: 'claude-3-sonnet-20240229', temperature: 0.5 },
  judge: { version: 'claude-3-5-sonnet-20241022', temperature: 0 },
  assistantTemperature: 0,
  setting: 'base',
} as const;

/**
 * A model id reduced to its letters and digits, lower-cased: `anthropic.claude-3-haiku-20240307-v1:0`,
 * `claude-3-haiku-20240307` and `us.anthropic.claude-3-haiku-20240307-v1:0` all hold
 * `claude3haiku20240307`; `meta-llama/Llama-3.1-8B-Instruct` holds `llama318binstruct`;
 * `mistral.mistral-7b-instruct-v0:2` holds `mistral7binstructv02`.
 */
export function modelKey(spec: string): string {
  // The provider prefix and any ?parameters are not the model's name.
  const name = spec.replace(/\?.*$/, '').replace(/^[a-z]+:/i, '');
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Whether a model spec names this version (a provider's id for it included). */
export function isVersion(spec: string, version: string): boolean {
  return modelKey(spec).includes(modelKey(version));
}

/** The paper's row for an assistant model spec, if the paper evaluated that model. */
export function paperRowFor(spec: string): PaperRow | undefined {
  return PAPER_TABLE3.find((r) => isVersion(spec, r.version));
}
