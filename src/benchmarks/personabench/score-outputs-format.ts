/** The terminal report of `persona score --outputs`: LogEval's tables, then the API evaluators'. */
import { renderTable, type ColumnSpec } from '../../tables/render.js';
import type { ScoreOutputsSummary } from './score-outputs.js';

const col = (key: string, format: ColumnSpec['format'] = 'float4'): ColumnSpec => ({ key, label: key, format });

export function formatScoreOutputs(s: ScoreOutputsSummary): string {
  const out: string[] = [];
  const r = s.logeval;
  if (r.task === '3.1') {
    out.push(
      `LogEval3.1 on ${s.file} (${s.lines} lines): ${r.processed} records scored, ${r.ignored} ignored (no label found, or a label other than positive/negative)`,
    );
    if (r.rows.length === 0) out.push('  no valid records: LogEval3.1 writes no CSV');
    else
      out.push(
        renderTable(
          {
            name: 'logeval-3.1',
            columns: [col('domain', 'text'), col('accuracy'), col('f1_score'), col('mcc'), col('count', 'int')],
            rows: r.rows.map((x) => ({ ...x })),
          },
          'table',
        ),
      );
  } else if (r.task === '3.2') {
    out.push(
      `LogEval3.2 on ${s.file} (${s.lines} lines): ${r.processed} records scored, ${r.ignored} ignored (no number in the output, or a label float() cannot read)`,
    );
    out.push(
      renderTable(
        { name: 'logeval-3.2', columns: [col('domain', 'text'), col('rmse'), col('mae'), col('count', 'int')], rows: r.rows.map((x) => ({ ...x })) },
        'table',
      ),
    );
  } else {
    const errors = r.summary.at(-1)?.output_errors ?? 0;
    out.push(
      `LogEval3.3 on ${s.file} (${s.lines} lines): ${r.summary.at(-1)?.count ?? 0} records, ${errors} output errors; SBERT ${r.sbert ? 'scored' : 'not scored (no --embeddings)'}`,
    );
    const columns = [col('scope', 'text'), col('identifier', 'text'), col('count', 'int'), col('output_errors', 'int')];
    if (r.sbert) columns.push(col('avg_sbert'));
    columns.push(col('avg_rougeL'), col('avg_rouge1'), col('avg_bleu'), col('avg_meteor'), col('valid_evals', 'int'));
    out.push(renderTable({ name: 'logeval-3.3', columns, rows: r.summary.map((x) => ({ ...x })) }, 'table'));
  }
  if ('skipped' in r && r.skipped.length > 0)
    out.push(
      `skipped ${r.skipped.length} lines at which the original stops (--skip-invalid): ${r.skipped
        .slice(0, 3)
        .map((x) => `line ${x.line}: ${x.reason}`)
        .join('; ')}${r.skipped.length > 3 ? '; ...' : ''}`,
    );
  if (s.api) {
    out.push(`${s.api.script}'s parse and metrics on the same outputs: ${s.api.parsed} parsed, ${s.api.unparsed} left out as unparsed`);
    if (s.api.rows.length > 0) {
      const keys = Object.keys(s.api.rows[0]!).filter((k) => k !== 'domain' && k !== 'count');
      out.push(renderTable({ name: 'api', columns: [col('domain', 'text'), ...keys.map((k) => col(k)), col('count', 'int')], rows: s.api.rows }, 'table'));
    }
  }
  out.push(s.written.length ? `written: ${s.written.join(', ')}` : 'nothing written');
  return out.join('\n');
}
