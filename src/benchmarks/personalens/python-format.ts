import { PlensError } from '../../core/errors.js';

/** A parsed `str.format` template: literal text and `{name}` fields, in order. */
export type PythonFormatPart = { text: string } | { field: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parses a template the way Python's `str.format` reads it: `{{` and `}}` are literal braces,
 * `{name}` is a field. Anything format would treat differently (positional `{}` or `{0}`,
 * attribute or index access, conversions `!r`, format specs `:>10`, a lone brace) is refused:
 * plens would not render it the way Python does.
 */
export function parsePythonFormat(text: string, file: string): PythonFormatPart[] {
  const parts: PythonFormatPart[] = [];
  let literal = '';
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n') line++;
    if (ch === '{' && text[i + 1] === '{') {
      literal += '{';
      i++;
    } else if (ch === '}' && text[i + 1] === '}') {
      literal += '}';
      i++;
    } else if (ch === '{') {
      const end = text.indexOf('}', i);
      const field = end < 0 ? '' : text.slice(i + 1, end);
      if (end < 0 || !NAME.test(field)) {
        throw new PlensError(
          'E_INPUT_SCHEMA',
          `unsupported format field {${end < 0 ? text.slice(i + 1, i + 20) : field}}: only {name} fields and {{ }} literal braces are supported`,
          {
            location: { file, line },
          },
        );
      }
      if (literal) parts.push({ text: literal });
      literal = '';
      parts.push({ field });
      i = end;
    } else if (ch === '}') {
      throw new PlensError('E_INPUT_SCHEMA', "single '}' in a format template (Python raises on it; write '}}' for a literal brace)", {
        location: { file, line },
      });
    } else {
      literal += ch;
    }
  }
  if (literal) parts.push({ text: literal });
  return parts;
}

/** The field names a template uses, in first-use order. */
export function formatFields(parts: PythonFormatPart[]): string[] {
  return [...new Set(parts.flatMap((p) => ('field' in p ? [p.field] : [])))];
}

/** Fills the fields with the view's strings; nothing else changes (no trimming). A missing value is an error, as Python's KeyError. */
export function renderPythonFormat(parts: PythonFormatPart[], view: Record<string, string | boolean | undefined>, file: string): string {
  let out = '';
  for (const p of parts) {
    if ('text' in p) {
      out += p.text;
      continue;
    }
    const value = view[p.field];
    if (typeof value !== 'string') {
      throw new PlensError(
        'E_INPUT_SCHEMA',
        `template field {${p.field}} has no value here (known: ${Object.keys(view)
          .filter((k) => typeof view[k] === 'string')
          .join(', ')})`,
        {
          location: { file },
        },
      );
    }
    out += value;
  }
  return out;
}

/** Writes a template's text back in `str.format` syntax (literal braces doubled). */
export function formatTemplateText(parts: PythonFormatPart[]): string {
  return parts.map((p) => ('text' in p ? p.text.replace(/[{}]/g, (b) => b + b) : `{${p.field}}`)).join('');
}
