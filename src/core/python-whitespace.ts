/**
 * Python's `str.strip()` / `str.lstrip()` with no argument, which the original applies to replies:
 * they remove the characters `str.isspace()` accepts. That set is not JavaScript's `trim()` set:
 * Python also strips U+001C-U+001F and U+0085, and keeps U+FEFF, which `trim()` removes.
 */
function isPythonSpace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    (code >= 0x1c && code <= 0x20) ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

export function pythonLstrip(text: string): string {
  let start = 0;
  while (start < text.length && isPythonSpace(text.charCodeAt(start))) start++;
  return text.slice(start);
}

export function pythonStrip(text: string): string {
  let end = text.length;
  while (end > 0 && isPythonSpace(text.charCodeAt(end - 1))) end--;
  return pythonLstrip(text.slice(0, end));
}
