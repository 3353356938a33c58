import { readFile } from 'node:fs/promises';
import { parse as parseTolerant, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { PlensError } from './errors.js';

/** 1-based line and column of a character offset. */
export function lineColumnOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Parses JSON text. JSON.parse is fast but its messages carry no reliable position
 * across Node versions, so on failure a second, strict parse locates the error.
 */
export function parseJsonText(text: string, file: string, lineOffset = 0): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const errors: ParseError[] = [];
    parseTolerant(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first ? first.offset : text.length;
    const { line, column } = lineColumnOf(text, offset);
    const what = first ? describeParseError(printParseErrorCode(first.error)) : 'invalid JSON';
    // A cut-off file usually ends inside a string or an open object: the parser then
    // reports something at the very end, whatever the first error was.
    const end = text.trimEnd().length;
    const truncated = errors.some((e) => e.offset + e.length >= end) || (first !== undefined && printParseErrorCode(first.error) === 'UnexpectedEndOfString');
    const description = text.trim().length === 0 ? 'the file is empty' : truncated ? `the JSON ends early (truncated file?): ${what}` : what;
    throw new PlensError('E_INPUT_JSON', `not valid JSON: ${description}`, {
      location: { file, line: line + lineOffset, column },
      cause: error,
    });
  }
}

function describeParseError(code: string): string {
  // jsonc-parser codes are PascalCase identifiers; make them read as words.
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      location: { file },
      cause: error,
    });
  }
  return parseJsonText(text, file);
}

/** Parses JSON Lines: one value per non-blank line; errors name the line. */
export function parseJsonLines(text: string, file: string): Array<{ line: number; value: unknown }> {
  const out: Array<{ line: number; value: unknown }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    out.push({ line: i + 1, value: parseJsonText(raw, file, i) });
  }
  return out;
}
