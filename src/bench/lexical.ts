import { Database } from '../db/database.js';
import { computeLexical, internWords, loadLexicalMacros } from '../stats/lexical.js';
import type { BenchResult } from './report.js';

const FULL_UTTERANCES = 1_000_000;
const LAPS_UTTERANCES = 50_000;

/**
 * Synthetic utterances: 5-34 words drawn log-uniformly from a 50,000-word vocabulary (a Zipf-like law:
 * frequent words repeat, most 3- and 4-grams are unique), ending with a full stop.
 */
async function syntheticCorpus(db: Database, table: string, n: number): Promise<void> {
  await db.run(`
    CREATE OR REPLACE TABLE ${table} AS
    SELECT 'both' AS grp, u AS utt,
      array_to_string(list_transform(range(5 + (hash(u) % 30)::INTEGER),
        j -> 'W' || (floor(exp(hash(u::VARCHAR || ':' || j::VARCHAR) / 18446744073709551615.0 * ln(50000))) - 1)::INTEGER::VARCHAR), ' ') || '.' AS text
    FROM range(${n}) t(u)`);
}

/** Peak resident memory of this process (DuckDB's native memory included), in MiB. */
function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/**
 * Lexical diversity (Table 10): the full protocol over 1,000,000 utterances, timed in its parts
 * (tokenising and interning; Dist-1, Dist-2 and Ent-4; exact Self-BLEU), and the laps protocol
 * (100 subsets of 7,012 tokens, all four metrics) over 50,000 utterances.
 */
export async function benchLexical(): Promise<BenchResult> {
  const db = await Database.open(':memory:', { threads: 2 });
  try {
    await loadLexicalMacros(db);
    await syntheticCorpus(db, 'corpus', FULL_UTTERANCES);
    let t = performance.now();
    const lap = () => {
      const now = performance.now();
      const s = (now - t) / 1000;
      t = now;
      return s;
    };
    await internWords(db, 'corpus', 'ids', 'bench_token');
    const tokenise = lap();
    const [tokens] = await db.all<{ n: number }>(`SELECT sum(len(units))::BIGINT AS n FROM ids`);
    await db.all(`SELECT * FROM dist_n(ids, 1)`);
    await db.all(`SELECT * FROM dist_n(ids, 2)`);
    await db.all(`SELECT * FROM ent_n(ids, 4)`);
    const distEnt = lap();
    await db.all(`SELECT * FROM self_bleu(ids)`);
    const selfBleu = lap();
    const peakFull = peakRssMiB();
    await db.run(`DROP TABLE ids; DROP TYPE bench_token; DROP TABLE corpus;`);

    await syntheticCorpus(db, 'laps_corpus', LAPS_UTTERANCES);
    lap();
    await computeLexical(db, 'laps_corpus', 'laps_result', { protocols: ['laps'] });
    const laps = lap();
    return {
      name: 'lexical',
      context: `full protocol on ${FULL_UTTERANCES.toLocaleString('en')} synthetic utterances (${(tokens!.n / 1e6).toFixed(1)}M word tokens, 50k-word Zipf-like vocabulary); laps (100 x 7,012-token subsets, all four metrics) on ${LAPS_UTTERANCES.toLocaleString('en')}; DuckDB 2 threads`,
      figures: [
        { name: 'full: tokenise + intern words', value: tokenise, unit: 's' },
        { name: 'full: Dist-1, Dist-2, Ent-4', value: distEnt, unit: 's' },
        { name: 'full: tokenise + Dist-1, Dist-2, Ent-4', value: tokenise + distEnt, unit: 's', bound: 20 },
        { name: 'full: exact Self-BLEU (word level)', value: selfBleu, unit: 's' },
        { name: 'full: tokenise + exact Self-BLEU', value: tokenise + selfBleu, unit: 's', bound: 60 },
        { name: 'full: peak RSS', value: peakFull, unit: 'MiB' },
        { name: 'laps: 100 iterations, 50k utterances', value: laps, unit: 's', bound: 60 },
        { name: 'peak RSS (whole bench)', value: peakRssMiB(), unit: 'MiB' },
      ],
    };
  } finally {
    db.close();
  }
}
