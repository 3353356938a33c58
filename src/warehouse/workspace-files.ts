import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether a workspace-relative path exists; a `*` segment matches any one folder name, and a last
 * segment with a `*` in it (`runs/*.json`) any one file name it fits.
 */
export function workspaceHas(root: string, pattern: string): boolean {
  const [head, ...rest] = pattern.split('/');
  if (head === undefined || head === '') return true;
  if (rest.length === 0 && head !== '*' && head.includes('*')) {
    const fits = new RegExp(`^${head.split('*').map(escapeRegExp).join('.*')}$`);
    try {
      // Hidden names (temp files being written) are not inputs.
      return readdirSync(root, { withFileTypes: true }).some((e) => e.isFile() && !e.name.startsWith('.') && fits.test(e.name));
    } catch {
      return false;
    }
  }
  if (head === '*') {
    let names: string[];
    try {
      names = readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return false;
    }
    return names.some((n) => workspaceHas(join(root, n), rest.join('/')));
  }
  return rest.length === 0 ? existsSync(join(root, head)) : workspaceHas(join(root, head), rest.join('/'));
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
