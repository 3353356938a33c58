/**
 * The one redactor: every text derived from a response body (error messages, failure records,
 * judge replies) and everything the CLI prints goes through `redact` before it is stored or shown.
 * It removes every known secret value (the API keys a run uses, any environment variable whose
 * name says it holds a secret) and anything that looks like a bearer token or an API key.
 */

export const REDACTED = '[REDACTED]';

/** Environment variable names that hold secrets: *_API_KEY, *_TOKEN, *_SECRET, *_PASSWORD, ... */
const SECRET_NAME = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)($|_)/i;
/** Shorter values are too likely to be ordinary words or numbers to cut out of every text. */
const MIN_SECRET_LENGTH = 6;

/**
 * Shapes of credentials whatever their source: `Bearer <token>`, `Basic <token>`, vendor key
 * prefixes (sk-..., sk-ant-...), and header-like `x-api-key: ...` / `api_key=...` pairs.
 */
const TOKEN_PATTERNS: Array<[RegExp, string]> = [
  // Case-sensitive as HTTP writes them, and with a digit, so prose ("bearer bonds") is left alone.
  [/\b(Bearer|Basic)\s+(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{6,}/g, REDACTED],
  [
    /\b((?:x-)?api[-_]?key|authorization|access[-_]?token|secret|password)(["']?\s*[:=]\s*["']?)(?!\[REDACTED\]|Bearer |Basic )[^\s"',;&}]{4,}/gi,
    `$1$2${REDACTED}`,
  ],
];

const secrets = new Set<string>();
let envScanned: NodeJS.ProcessEnv | undefined;

/** Adds a value to redact from now on (an API key a client was created with). */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) secrets.add(value);
}

/** Registers the values of every environment variable whose name marks it as a secret, and the named ones. */
export function registerSecretsFromEnv(env: NodeJS.ProcessEnv = process.env, names: readonly string[] = []): void {
  for (const name of names) registerSecret(env[name]);
  // Scanned every time: the same process.env object may have gained variables since.
  envScanned = env;
  for (const [name, value] of Object.entries(env)) if (SECRET_NAME.test(name)) registerSecret(value);
}

/** Whether a name (an env variable, a parameter) looks like it names a secret. */
export function looksSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** `text` with every known secret and every token-like credential replaced by [REDACTED]. */
export function redact(text: string): string {
  if (envScanned === undefined) registerSecretsFromEnv();
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  for (const [pattern, replacement] of TOKEN_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** `redact` over every string inside a JSON-like value (records before they are written). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value !== null && typeof value === 'object' && (value as object).constructor === Object) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}
