/**
 * Overall and per-subreddit scores as the original evaluators group them (spec §1.7,
 * §4.2b.8): 3.1/GPT.py lower-cases the domain, the other scripts keep it as is; a missing
 * domain is "unknown_domain" (an empty one stays ""), except in LogEval, which leaves null
 * subreddits out of the per-domain rows but keeps them in ALL.
 */

export type DomainRule = 'lowercase' | 'as-is' | 'logeval';

export interface DomainGroups<T> {
  all: T[];
  byDomain: Map<string, T[]>;
}

export function groupBySubreddit<T>(rows: readonly T[], subredditOf: (row: T) => string | null | undefined, rule: DomainRule): DomainGroups<T> {
  const byDomain = new Map<string, T[]>();
  for (const row of rows) {
    const raw = subredditOf(row);
    if ((raw === null || raw === undefined) && rule === 'logeval') continue;
    // record.get('subreddit', 'unknown_domain'): only a missing key falls back; "" stays "".
    let domain = raw === null || raw === undefined ? 'unknown_domain' : raw;
    if (rule === 'lowercase') domain = domain.toLowerCase();
    let list = byDomain.get(domain);
    if (list === undefined) byDomain.set(domain, (list = []));
    list.push(row);
  }
  return { all: [...rows], byDomain };
}

/** Applies a scoring function to ALL and to each domain (domains in first-seen order). */
export function scoreGroups<T, S>(groups: DomainGroups<T>, score: (rows: T[]) => S): { all: S; byDomain: Array<{ domain: string; count: number; scores: S }> } {
  return {
    all: score(groups.all),
    byDomain: [...groups.byDomain].map(([domain, rows]) => ({ domain, count: rows.length, scores: score(rows) })),
  };
}
