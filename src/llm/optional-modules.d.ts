// The optional dependency's name, for builds where it was not installed (npm ci --omit=optional):
// local-embeddings.ts types what it uses itself. Where the package is installed its own types win.
declare module '@huggingface/transformers';
