import type { ImportSummary } from './import.js';

export function formatImportSummary(s: ImportSummary): string {
  const lines: string[] = [];
  lines.push(`${s.dry_run ? 'Checked (dry run, nothing written)' : 'Imported'} ${s.source.data_dir}`);
  lines.push(`  schema     ${s.source.schema_file}`);
  lines.push(`  users      ${s.users}`);
  lines.push(`  tasks      ${s.tasks.sd + s.tasks.md} (${s.tasks.sd} SD + ${s.tasks.md} MD)`);
  lines.push(`  scenarios  ${s.scenarios.sd + s.scenarios.md} (${s.scenarios.sd} SD + ${s.scenarios.md} MD)`);
  if (!s.dry_run) {
    lines.push(`  tables in  ${s.dataset_dir}`);
    for (const [name, t] of Object.entries(s.tables)) lines.push(`    ${name.padEnd(18)} ${String(t.rows).padStart(9)} rows`);
  }
  lines.push(`  normalised ${s.normalisations.length} key(s)${s.normalisations.length ? ':' : ''}`);
  for (const n of s.normalisations) lines.push(`    ${n.file}#${n.pointer}: "${n.from}" -> "${n.to}"`);
  if (s.warnings.length) {
    lines.push(`  warnings   ${s.warnings.length}:`);
    for (const w of s.warnings.slice(0, 10)) lines.push(`    ${w}`);
    if (s.warnings.length > 10) lines.push(`    ... ${s.warnings.length - 10} more (see manifest.json or --json)`);
  }
  lines.push(`  took       ${(s.elapsed_ms / 1000).toFixed(1)} s`);
  return lines.join('\n');
}
