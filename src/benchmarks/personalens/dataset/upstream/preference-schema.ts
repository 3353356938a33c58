import { readJsonFile } from '../../../../core/json-input.js';
import { PlensError } from '../../../../core/errors.js';
import { assertValid } from '../../../../core/validator.js';

export interface PreferenceType {
  name: string;
  description?: string;
  is_categorical: boolean;
  has_multiple_values: boolean;
  possible_values: string[];
}

export interface DomainSchema {
  domain: string;
  description?: string;
  tasks?: Array<{ name: string; description?: string }>;
  affinities: PreferenceType[];
}

/** The preference schema: the list of domains and, per domain, its preference types. */
export class PreferenceSchema {
  readonly domains: DomainSchema[];
  private readonly types: Map<string, Set<string>>;

  private constructor(domains: DomainSchema[]) {
    this.domains = domains;
    this.types = new Map(domains.map((d) => [d.domain, new Set(d.affinities.map((a) => a.name))]));
  }

  static async read(file: string): Promise<PreferenceSchema> {
    const data = await readJsonFile(file);
    assertValid<DomainSchema[]>('plens:upstream-preference-schema', data, { file });
    const seen = new Set<string>();
    data.forEach((d, i) => {
      if (seen.has(d.domain)) {
        throw new PlensError('E_INPUT_DUPLICATE', `domain "${d.domain}" is defined twice`, { location: { file, pointer: `/${i}/domain` } });
      }
      seen.add(d.domain);
    });
    return new PreferenceSchema(data);
  }

  hasDomain(domain: string): boolean {
    return this.types.has(domain);
  }

  hasPreferenceType(domain: string, type: string): boolean {
    return this.types.get(domain)?.has(type) ?? false;
  }

  get domainNames(): string[] {
    return this.domains.map((d) => d.domain);
  }
}
