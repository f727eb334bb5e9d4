/**
 * Where a CRD schema of ours would refuse what another accepts: the question "is every manifest
 * valid for cert-manager valid for us?" asked field by field (pure; see schema-diff.test.ts, and
 * cert-manager-parity.test.ts for the answer against cert-manager's own CRDs).
 *
 * Only what can make us *stricter* is reported; what we accept beyond the other schema is not a
 * difference a user of the other can meet.
 */
export type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  minLength?: number;
  minItems?: number;
  minimum?: number;
  maximum?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
};

export type DifferenceKind = 'missing' | 'type' | 'enum' | 'required' | 'pattern' | 'format' | 'limit' | 'rule';

export interface Difference {
  /** Where: `spec.dnsNames[]`, `spec.secretTemplate.labels{}` (a map's values). */
  path: string;
  kind: DifferenceKind;
  /** What ours says against theirs, in a few words. */
  detail: string;
}

const LOWER_BOUNDS = ['minLength', 'minItems', 'minimum'] as const;
const UPPER_BOUNDS = ['maxLength', 'maxItems', 'maxProperties', 'maximum'] as const;

/** Every way `ours` refuses something `theirs` accepts, by path (sorted). */
export function stricterThan(ours: Schema, theirs: Schema, path = ''): Difference[] {
  const out: Difference[] = [];
  walk(ours, theirs, path, out);
  return out.sort((a, b) => a.path.localeCompare(b.path) || a.kind.localeCompare(b.kind));
}

function walk(ours: Schema, theirs: Schema, path: string, out: Difference[]): void {
  const at = (kind: DifferenceKind, detail: string) => out.push({ path: path || '.', kind, detail });
  // Anything goes below a field that keeps unknown fields: nothing more can be stricter there.
  if (ours['x-kubernetes-preserve-unknown-fields'] && !ours.properties && !ours.items) return;
  const oursType = ours['x-kubernetes-int-or-string'] ? 'int-or-string' : ours.type;
  const theirType = theirs['x-kubernetes-int-or-string'] ? 'int-or-string' : theirs.type;
  if (oursType && theirType && oursType !== theirType && !(oursType === 'number' && theirType === 'integer')) at('type', `${oursType}, not ${theirType}`);
  if (ours.enum) {
    const refused = theirs.enum ? theirs.enum.filter((v) => !ours.enum!.includes(v)) : ['any value'];
    if (refused.length) at('enum', `refuses ${refused.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  if (ours.pattern && ours.pattern !== theirs.pattern) at('pattern', `/${ours.pattern}/${theirs.pattern ? ` (theirs /${theirs.pattern}/)` : ''}`);
  if (ours.format && ours.format !== theirs.format) at('format', `${ours.format}${theirs.format ? ` (theirs ${theirs.format})` : ''}`);
  for (const k of UPPER_BOUNDS)
    if (ours[k] !== undefined && (theirs[k] === undefined || ours[k]! < theirs[k]!))
      at('limit', `${k} ${ours[k]}${theirs[k] !== undefined ? ` (theirs ${theirs[k]})` : ''}`);
  for (const k of LOWER_BOUNDS)
    if (ours[k] !== undefined && ours[k]! > 0 && (theirs[k] === undefined || ours[k]! > theirs[k]!))
      at('limit', `${k} ${ours[k]}${theirs[k] !== undefined ? ` (theirs ${theirs[k]})` : ''}`);
  const theirRules = new Set((theirs['x-kubernetes-validations'] ?? []).map((r) => r.rule));
  for (const r of ours['x-kubernetes-validations'] ?? []) if (!theirRules.has(r.rule)) at('rule', r.message ? `${r.rule} (${r.message})` : r.rule);
  const theirRequired = new Set(theirs.required ?? []);
  for (const f of ours.required ?? []) if (!theirRequired.has(f)) at('required', f);

  for (const [name, theirProp] of Object.entries(theirs.properties ?? {})) {
    const child = `${path ? `${path}.` : ''}${name}`;
    const ourProp = ours.properties?.[name] ?? (typeof ours.additionalProperties === 'object' ? ours.additionalProperties : undefined);
    if (ourProp) walk(ourProp, theirProp, child, out);
    else if (!ours['x-kubernetes-preserve-unknown-fields'] && ours.additionalProperties !== true)
      out.push({ path: child, kind: 'missing', detail: 'unknown field' });
  }
  if (theirs.items) {
    if (ours.items) walk(ours.items, theirs.items, `${path}[]`, out);
  }
  if (typeof theirs.additionalProperties === 'object') {
    if (typeof ours.additionalProperties === 'object') walk(ours.additionalProperties, theirs.additionalProperties, `${path}{}`, out);
    else if (!ours['x-kubernetes-preserve-unknown-fields'] && ours.additionalProperties !== true && !ours.properties) at('missing', 'map values');
  }
}
