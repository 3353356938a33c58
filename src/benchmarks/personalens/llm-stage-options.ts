/** How any LLM stage runs: declared with the LLM-stage kit (engine/llm-stage.ts). */
export type { LlmStageOptions } from '../../engine/llm-stage.js';
