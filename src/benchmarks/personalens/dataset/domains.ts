/**
 * Domain keys as they appear in upstream files, mapped to the preference schema's
 * domain names. The released data has one stray key ("Buses**"); we strip characters
 * that cannot belong to a domain name and report every such change.
 */

export interface Normalisation {
  file: string;
  pointer: string;
  from: string;
  to: string;
}

export function normaliseDomainKey(raw: string): string {
  return raw
    .replace(/[^A-Za-z ]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export const MULTI_DOMAIN_DIR = 'Multi-Domain';
