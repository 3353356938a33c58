/**
 * Functions a sandboxed connection (`plens sql`, notebooks) refuses by name, wherever they appear:
 * they configure the database behind the locked configuration (logging to files: DuckDB aborts
 * the whole process when the path is outside the allowed folders, and writes log files when it is
 * inside), or run SQL built from strings, which no check of the text could see into.
 */
const REFUSED: ReadonlyMap<string, string> = new Map([
  ['enable_logging', 'it turns logging on (to files as well)'],
  ['disable_logging', 'it changes the logging configuration'],
  ['truncate_duckdb_logs', 'it changes the logs'],
  ['write_log', 'it writes to the logs'],
  ['query', 'it runs SQL built from a string'],
  ['query_table', 'it runs SQL built from a string'],
  ['json_execute_serialized_sql', 'it runs SQL built from a string'],
]);

/**
 * The first refused function a SQL text calls, with why; undefined when none. Comments and string
 * literals are skipped (a name inside a string is text), double-quoted identifiers are read as
 * names, and any qualification (`main.enable_logging`) is ignored. A name counts where a function
 * can stand: before `(`, or after CALL.
 */
export function refusedFunction(sql: string): { name: string; why: string } | undefined {
  const words: Array<{ word: string; next: string }> = [];
  let i = 0;
  const n = sql.length;
  const push = (word: string) => words.push({ word: word.toLowerCase(), next: '' });
  while (i < n) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'") {
      // '' inside a literal is a quote; E'...' escapes with a backslash.
      const escaped = i > 0 && /[eE]/.test(sql[i - 1]!) && !/[A-Za-z0-9_]/.test(sql[i - 2] ?? ' ');
      i++;
      while (i < n) {
        if (escaped && sql[i] === '\\') i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
    } else if (c === '$' && /^\$([A-Za-z_]\w*)?\$/.test(sql.slice(i, i + 64))) {
      const tag = /^\$([A-Za-z_]\w*)?\$/.exec(sql.slice(i, i + 64))![0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end < 0 ? n : end + tag.length;
    } else if (c === '"') {
      let j = i + 1;
      let word = '';
      while (j < n) {
        if (sql[j] === '"' && sql[j + 1] === '"') {
          word += '"';
          j += 2;
        } else if (sql[j] === '"') break;
        else word += sql[j++];
      }
      push(word);
      i = j + 1;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[j]!)) j++;
      push(sql.slice(i, j));
      i = j;
    } else {
      if (!/\s/.test(c) && words.length && words.at(-1)!.next === '') words.at(-1)!.next = c;
      i++;
    }
  }
  for (let k = 0; k < words.length; k++) {
    const { word, next } = words[k]!;
    const why = REFUSED.get(word);
    if (!why) continue;
    const afterCall =
      words[k - 1]?.word === 'call' ||
      (words[k - 1]?.next === '.' &&
        words
          .slice(0, k)
          .reverse()
          .find((w) => w.next !== '.')?.word === 'call');
    if (next === '(' || afterCall) return { name: word, why };
  }
  return undefined;
}
