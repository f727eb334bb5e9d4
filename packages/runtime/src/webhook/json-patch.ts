/** One RFC 6902 operation, as a mutating webhook answers them. */
export type PatchOp = { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

const escape = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The JSON Patch that turns `before` into `after`: objects compared key by key, anything else (arrays
 * included) replaced whole when it differs. Mutators write the object they want; the webhook answers
 * with the difference, so a mutator never writes patch paths by hand.
 */
export function diffPatch(before: unknown, after: unknown, path = ''): PatchOp[] {
  if (isObject(before) && isObject(after)) {
    const ops: PatchOp[] = [];
    for (const key of Object.keys(before)) {
      if (!(key in after) || after[key] === undefined) ops.push({ op: 'remove', path: `${path}/${escape(key)}` });
    }
    for (const [key, value] of Object.entries(after)) {
      if (value === undefined) continue;
      const p = `${path}/${escape(key)}`;
      if (!(key in before) || before[key] === undefined) ops.push({ op: 'add', path: p, value });
      else ops.push(...diffPatch(before[key], value, p));
    }
    return ops;
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [{ op: 'replace', path, value: after }];
}
