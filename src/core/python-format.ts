/**
 * How Python prints values, where plens must write the same bytes as a Python script: `repr`
 * of a float (shortest round-trip digits, like JavaScript, but with Python's switch to
 * exponent notation below 1e-4 and from 1e16, a two-digit signed exponent and `.0` on whole
 * numbers), `str` of a JSON value, and CSV rows as the `csv` module and pandas quote them.
 */

/** Python `repr(float)` (also `str`, and what numpy and pandas print for a float64). */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  // toExponential() without digits gives the shortest digits that read back as x.
  const [mantissa, exponentText] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const rest = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exponent).toString().padStart(2, '0');
    return `${sign}${rest}e${exponent < 0 ? '-' : '+'}${e}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}.${fraction === '' ? '0' : fraction}`;
}

/**
 * Python `str(value)` of a value read from JSON: strings as they are, None, True/False,
 * integers without a point, other numbers as `repr(float)`. Lists and objects are printed
 * as JSON (Python would print its own repr; plens does not claim to match that).
 */
export function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) < 1e16 ? String(value) : pythonFloatRepr(value);
  return JSON.stringify(value);
}

/**
 * One CSV row with minimal quoting, as Python's `csv.writer` and pandas `to_csv` write it: a
 * field holding the separator, a quote, CR or LF is quoted, quotes doubled.
 */
export function csvRow(fields: readonly string[], lineEnd: '\n' | '\r\n'): string {
  return fields.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(',') + lineEnd;
}

/**
 * Python `json.dumps(value, indent=indent, ensure_ascii=ensureAscii)` (no indent: `, ` and
 * `: ` separators, as json.dumps writes a line). A `Map` is a Python dict in its insertion
 * order (a plain object's key order puts integer-like keys first, a dict's does not). A whole
 * number prints as an int: a float that was written `5.0` in the source cannot be told apart.
 */
export function pythonJsonDumps(value: unknown, options: { indent?: number; ensureAscii?: boolean } = {}): string {
  const ascii = options.ensureAscii !== false;
  const step = options.indent;
  const str = (s: string): string => {
    const json = JSON.stringify(s);
    return ascii ? json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
  };
  const walk = (v: unknown, depth: number): string => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') {
      if (Number.isNaN(v)) return 'NaN';
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
      return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : pythonFloatRepr(v);
    }
    if (typeof v === 'string') return str(v);
    const entries: Array<[string | null, unknown]> = Array.isArray(v)
      ? v.map((x) => [null, x])
      : v instanceof Map
        ? [...v].map(([k, x]) => [String(k), x])
        : Object.entries(v as Record<string, unknown>);
    const open = Array.isArray(v) ? '[' : '{';
    const close = Array.isArray(v) ? ']' : '}';
    if (entries.length === 0) return open + close;
    const item = ([k, x]: [string | null, unknown]): string => (k === null ? '' : `${str(k)}: `) + walk(x, depth + 1);
    if (step === undefined) return open + entries.map(item).join(', ') + close;
    const inner = '\n' + ' '.repeat(step * (depth + 1));
    return open + inner + entries.map(item).join(',' + inner) + '\n' + ' '.repeat(step * depth) + close;
  };
  return walk(value, 0);
}
