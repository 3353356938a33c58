/** Worker thread of `scorePairs`: scores each chunk it is sent with one long-lived scorer. */
import { parentPort } from 'node:worker_threads';
import { GenerationScorer } from './generation.js';
import { scoreChunk, type ScoreChunk, type ScoredChunk } from './parallel.js';

const scorer = new GenerationScorer();
parentPort!.on('message', (chunk: ScoreChunk) => {
  let reply: ScoredChunk;
  try {
    reply = { id: chunk.id, scores: scoreChunk(scorer, chunk.references, chunk.candidates) };
  } catch (error) {
    reply = { id: chunk.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply, 'scores' in reply ? [reply.scores.buffer as ArrayBuffer] : []);
});
