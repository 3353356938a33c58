// Apart from call-cache.ts (which loads LMDB) so the CLI's option parsing can name the modes cheaply.

/**
 * on      serve hits, record misses (default)
 * off     neither read nor write
 * read    serve hits, record nothing
 * write   always call the endpoint, record the answer (refreshes entries)
 * replay  serve hits; a miss is an error (exact reproduction of a finished run)
 */
export const CACHE_MODES = ['on', 'off', 'read', 'write', 'replay'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];
