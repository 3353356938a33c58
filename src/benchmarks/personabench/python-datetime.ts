/**
 * The prompt makers' timestamp reading, as CPython 3.11 runs it: `parse_timestamp` (a trailing Z
 * made +00:00, every other Z too, then `datetime.fromisoformat`, then `strptime` fallbacks; a
 * naive time is UTC) and `datetime_to_string` (the time in UTC, `isoformat()` with +00:00 as Z).
 * `fromisoformat` follows the C implementation of Modules/_datetimemodule.c (3.11), quirks
 * included: any single character separates date and time, the character just before a time zone
 * is not checked, digits past the sixth of a fraction are dropped. Written from the documented
 * behaviour and checked against /usr/bin/python3 by test/differential/personabench.
 */
export interface PythonDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  microsecond: number;
  /** UTC offset in microseconds; null for a naive time. */
  offsetMicros: number | null;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** n ASCII digits at i, or null (the C parser's parse_digits). */
function digits(s: string, i: number, n: number): number | null {
  let v = 0;
  for (let k = 0; k < n; k++) {
    const c = s[i + k];
    if (!isDigit(c)) return null;
    v = v * 10 + (c!.charCodeAt(0) - 48);
  }
  return v;
}

function isLeap(y: number): boolean {
  return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Days since 0001-01-01 (proleptic Gregorian), 1-based as Python's toordinal. */
function toOrdinal(y: number, m: number, d: number): number {
  const y1 = y - 1;
  let days = y1 * 365 + Math.floor(y1 / 4) - Math.floor(y1 / 100) + Math.floor(y1 / 400);
  for (let k = 1; k < m; k++) days += daysInMonth(y, k);
  return days + d;
}

function fromOrdinal(n: number): [number, number, number] {
  // Through a JS date: ordinal 719163 is 1970-01-01.
  const t = new Date(0);
  t.setUTCFullYear(1970, 0, 1 + (n - 719163));
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
}

/** Python's _find_isoformat_datetime_separator. */
function separatorAt(s: string): number {
  const len = s.length;
  if (len === 7) return 7;
  if (s[4] === '-') {
    if (s[5] === 'W') {
      if (len > 8 && s[8] === '-') {
        if (len === 9) return -1;
        if (len > 10 && isDigit(s[10])) return 8;
        return 10;
      }
      return 8;
    }
    return 10;
  }
  if (s[4] === 'W') {
    let idx = 7;
    while (idx < len && isDigit(s[idx])) idx++;
    if (idx < 9) return idx;
    return idx % 2 === 0 ? 7 : 8;
  }
  return 8;
}

/** parse_isoformat_date: [year, month, day], or null. */
function parseDate(s: string, len: number): [number, number, number] | null {
  const year = digits(s, 0, 4);
  if (year === null) return null;
  let p = 4;
  const sep = s[p] === '-';
  if (sep) p++;
  if (s[p] === 'W') {
    p++;
    const week = digits(s, p, 2);
    if (week === null) return null;
    p += 2;
    let day = 1;
    if (p < len) {
      if (sep && s[p++] !== '-') return null;
      const d = digits(s, p, 1);
      if (d === null) return null;
      day = d;
    }
    // iso_to_ymd: week 1..52 (53 in a long year), day 1..7.
    if (week <= 0 || week >= 53) {
      const jan1 = (toOrdinal(year, 1, 1) + 6) % 7; // 0 = Monday
      const long = jan1 === 3 || (jan1 === 2 && isLeap(year));
      if (!(week === 53 && long)) return null;
    }
    if (day <= 0 || day >= 8) return null;
    const jan4 = toOrdinal(year, 1, 4);
    const firstMonday = jan4 - ((jan4 + 6) % 7);
    return fromOrdinal(firstMonday + (week - 1) * 7 + (day - 1));
  }
  const month = digits(s, p, 2);
  if (month === null) return null;
  p += 2;
  if (sep && s[p++] !== '-') return null;
  const day = digits(s, p, 2);
  if (day === null) return null;
  return [year, month, day];
}

/** parse_hh_mm_ss_ff over s[from, end): {rv, h, m, s, us}; rv < 0 is an error, 1 "not at the end". */
function parseHms(s: string, from: number, end: number): { rv: number; v: [number, number, number, number] } {
  const v: [number, number, number, number] = [0, 0, 0, 0];
  let p = from;
  let hasSep = true;
  for (let i = 0; i < 3; i++) {
    const d = digits(s, p, 2);
    if (d === null) return { rv: -3, v };
    v[i] = d;
    p += 2;
    const c = s[p] ?? '\0';
    p++;
    if (i === 0) hasSep = c === ':';
    if (p >= end) return { rv: c !== '\0' ? 1 : 0, v };
    if (hasSep && c === ':') continue;
    if (c === '.' || c === ',') break;
    if (!hasSep) p--;
    else return { rv: -4, v };
  }
  const remains = end - p;
  const take = remains >= 6 ? 6 : remains;
  const us = take > 0 ? digits(s, p, take) : 0;
  if (us === null) return { rv: -3, v };
  v[3] = take > 0 && take < 6 ? us * [100000, 10000, 1000, 100, 10][take - 1]! : us;
  p += take;
  while (isDigit(s[p])) p++;
  return { rv: p < s.length ? 1 : 0, v };
}

/** `datetime.fromisoformat(s)` (CPython 3.11, C implementation), or null where it raises ValueError. */
export function fromIsoFormat(s: string): PythonDateTime | null {
  if (s.length < 7) return null;
  const at = separatorAt(s);
  if (at < 0) return null;
  const date = parseDate(s, at);
  if (!date) return null;
  let time: [number, number, number, number] = [0, 0, 0, 0];
  let offsetMicros: number | null = null;
  if (s.length > at) {
    const from = at + 1;
    let tz = from;
    while (tz < s.length && s[tz] !== 'Z' && s[tz] !== '+' && s[tz] !== '-') tz++;
    const t = parseHms(s, from, tz);
    if (t.rv < 0) return null;
    time = t.v;
    if (tz === s.length) {
      if (t.rv === 1) return null;
    } else if (s[tz] === 'Z') {
      if (tz + 1 !== s.length) return null;
      offsetMicros = 0;
    } else {
      const sign = s[tz] === '-' ? -1 : 1;
      const o = parseHms(s, tz + 1, s.length);
      if (o.rv !== 0) return null;
      offsetMicros = sign * ((o.v[0] * 3600 + o.v[1] * 60 + o.v[2]) * 1_000_000 + o.v[3]);
    }
  }
  return validated({ year: date[0], month: date[1], day: date[2], hour: time[0], minute: time[1], second: time[2], microsecond: time[3], offsetMicros });
}

/** The datetime constructor's checks (and timezone's: an offset strictly within a day). */
function validated(d: PythonDateTime): PythonDateTime | null {
  if (d.year < 1 || d.year > 9999 || d.month < 1 || d.month > 12 || d.day < 1 || d.day > daysInMonth(d.year, d.month)) return null;
  if (d.hour > 23 || d.minute > 59 || d.second > 59 || d.microsecond > 999_999) return null;
  if (d.offsetMicros !== null && Math.abs(d.offsetMicros) >= 86_400_000_000) return null;
  return d;
}

/**
 * `datetime.strptime(s, '%Y-%m-%d<sep>%H:%M:%S')`: %Y four digits, the others one or two, the
 * whole string; a space in the format matches any run of whitespace. ASCII digits only.
 */
export function strptimeYmdHms(s: string, sep: 'T' | ' '): PythonDateTime | null {
  const space = sep === ' ' ? '\\s+' : 'T';
  const m = new RegExp(
    `^(\\d{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])${space}(2[0-3]|[0-1]\\d|\\d):([0-5]\\d|\\d):(6[0-1]|[0-5]\\d|\\d)$`,
    sep === 'T' ? 'i' : '',
  ).exec(s);
  if (!m) return null;
  return validated({
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]!.trim()),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6]),
    microsecond: 0,
    offsetMicros: null,
  });
}

/** The makers' parse_timestamp of a string: an aware or naive time, or null where it gives None. */
export function makerParseTimestamp(text: string): PythonDateTime | null {
  if (text === '') return null;
  let ts = text;
  if (ts.endsWith('Z')) ts = `${ts.slice(0, -1)}+00:00`;
  const iso = fromIsoFormat(ts.replaceAll('Z', '+00:00'));
  if (iso) return iso;
  const fallback = strptimeYmdHms(ts.split('.')[0]!, 'T');
  if (fallback) return fallback;
  return strptimeYmdHms(text, ' ') ?? strptimeYmdHms(text, 'T');
}

/** Epoch microseconds of a time (naive = UTC), and datetime_to_string's text; null past year 1-9999 in UTC. */
export function makerTimestampString(d: PythonDateTime): { time: number; iso: string } | null {
  const local = new Date(0);
  local.setUTCFullYear(d.year, d.month - 1, d.day);
  local.setUTCHours(d.hour, d.minute, d.second, 0);
  // In BigInt: microseconds of years 1 and 9999 are past 2^53, where a double loses the last digits.
  const total = BigInt(local.getTime()) * 1000n + BigInt(d.microsecond) - BigInt(d.offsetMicros ?? 0);
  const floorMs = total >= 0n ? total / 1000n : -((-total + 999n) / 1000n);
  const us = Number(total - floorMs * 1000n);
  const utc = new Date(Number(floorMs));
  const year = utc.getUTCFullYear();
  if (year < 1 || year > 9999) return null;
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const fraction = utc.getUTCMilliseconds() * 1000 + us;
  const iso =
    `${pad(year, 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())}T${pad(utc.getUTCHours())}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}` +
    (fraction ? `.${pad(fraction, 6)}` : '') +
    'Z';
  return { time: Number(total), iso };
}
