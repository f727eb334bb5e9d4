/**
 * Label selectors as the API server reads them (`a=b,c!=d,e in (f,g),h notin (i),j,!k`), so the
 * cache answers exactly what a LIST with the same selector would.
 */
export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

/** A selector the API server would refuse too. */
export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

interface Requirement {
  key: string;
  op: 'in' | 'notin' | 'exists' | '!exists';
  values: string[];
}

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map((p) => p.trim()).filter(Boolean);
}

function parseRequirement(term: string): Requirement {
  let m: RegExpMatchArray | null;
  if ((m = term.match(/^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
    return {
      key: m[1]!,
      op: m[2] as 'in' | 'notin',
      values: m[3]!
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    };
  }
  if ((m = term.match(/^([^\s!=]+)\s*(==|=|!=)\s*(\S*)$/))) {
    return { key: m[1]!, op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]!] };
  }
  if ((m = term.match(/^!\s*([^\s!=]+)$/))) return { key: m[1]!, op: '!exists', values: [] };
  if ((m = term.match(/^([^\s!=()]+)$/))) return { key: m[1]!, op: 'exists', values: [] };
  throw new SelectorError(`invalid label selector term: "${term}"`);
}

/** A parsed selector: its matcher, and the `key in (values)` terms an index can answer. */
export interface ParsedSelector {
  matches: LabelMatcher;
  /** The requirements that name the values a label must have (`a=b`, `a in (b,c)`). */
  equalities: { key: string; values: string[] }[];
}

// Reconciles list with the same few selectors over and over: parse each once (bounded).
const parsed = new Map<string, ParsedSelector>();
const PARSED_MAX = 512;

export function parseSelector(selector: string | Record<string, string> | undefined): ParsedSelector {
  if (!selector) return { matches: () => true, equalities: [] };
  const text = typeof selector === 'string' ? selector : undefined;
  const hit = text !== undefined ? parsed.get(text) : undefined;
  if (hit) return hit;
  const reqs: Requirement[] =
    typeof selector === 'string' ? splitTopLevel(selector).map(parseRequirement) : Object.entries(selector).map(([key, v]) => ({ key, op: 'in', values: [v] }));
  const result = { matches: matcherOf(reqs), equalities: reqs.filter((r) => r.op === 'in').map((r) => ({ key: r.key, values: r.values })) };
  if (text !== undefined) {
    if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value!);
    parsed.set(text, result);
  }
  return result;
}

export function parseLabelSelector(selector: string | Record<string, string> | undefined): LabelMatcher {
  return parseSelector(selector).matches;
}

function matcherOf(reqs: Requirement[]): LabelMatcher {
  return (labels = {}) =>
    reqs.every((r) => {
      const value = Object.prototype.hasOwnProperty.call(labels, r.key) ? labels[r.key] : undefined;
      const has = value !== undefined;
      switch (r.op) {
        case 'in':
          return has && r.values.includes(value);
        case 'notin':
          return !has || !r.values.includes(value);
        case 'exists':
          return has;
        case '!exists':
          return !has;
      }
    });
}

/** `{a: 'b'}` → `a=b`, for sending a selector to the API server. */
export const formatLabelSelector = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** A label selector as objects carry it (`metav1.LabelSelector`): the terms are ANDed. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/**
 * The matcher of a selector written in an object (a Gateway's `allowedListeners`, a webhook's
 * `namespaceSelector`), with the API server's meaning: an empty selector matches everything, and
 * an operator it does not know matches nothing (such a selector would be refused on write, so a
 * guess either way could only widen what the writer meant).
 */
export function labelSelectorMatcher(selector: LabelSelector | undefined): LabelMatcher {
  const reqs: (Requirement | undefined)[] = [
    ...Object.entries(selector?.matchLabels ?? {}).map(([key, v]): Requirement => ({ key, op: 'in', values: [v] })),
    ...(selector?.matchExpressions ?? []).map((e): Requirement | undefined => {
      const op = ({ In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!exists' } as const)[e.operator];
      return op && { key: e.key, op, values: e.values ?? [] };
    }),
  ];
  if (reqs.some((r) => r === undefined)) return () => false;
  return matcherOf(reqs as Requirement[]);
}
