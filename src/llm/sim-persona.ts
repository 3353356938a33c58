import { createHash } from 'node:crypto';

/**
 * The facts the simulator answers a PERSONA-bench prompt from (filled by the predictions stage):
 * the task, the sample, its true answer and the replicate.
 */
export interface PersonaSimulationFacts {
  benchmark: 'persona-bench';
  task: '3.1' | '3.2' | '3.3';
  sampleId: string;
  trueLabel: string | number;
  replicate: number;
}

export function personaFacts(value: unknown): PersonaSimulationFacts | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Partial<PersonaSimulationFacts>;
  return f.benchmark === 'persona-bench' && typeof f.sampleId === 'string' ? (f as PersonaSimulationFacts) : undefined;
}

function chance(seed: string): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * A deterministic answer that is mostly right, sometimes wrong and sometimes unreadable, so every
 * path of the predictions stage and the scores is exercised. It says nothing about any model.
 */
export function simulatedPersonaReply(f: PersonaSimulationFacts): string {
  const roll = chance(`persona|${f.sampleId}|${f.replicate}`);
  if (f.task === '3.1') {
    const truth = String(f.trueLabel);
    const other = truth === 'positive' ? 'negative' : 'positive';
    if (roll < 0.7) return truth;
    if (roll < 0.85) return other;
    if (roll < 0.93) return `I would say ${truth}.`;
    return 'It is hard to tell.';
  }
  if (f.task === '3.2') {
    const truth = Number(f.trueLabel);
    if (roll < 0.6) return String(truth);
    if (roll < 0.9) return String(truth + Math.round((roll - 0.75) * 20));
    return 'No idea.';
  }
  const words = String(f.trueLabel).split(/\s+/).filter(Boolean);
  if (roll < 0.08) return '<think>Nothing to add.</think>';
  const keep = Math.max(1, Math.round(words.length * roll));
  return `${words.slice(0, keep).join(' ')} indeed`;
}
