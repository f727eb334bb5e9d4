/** Structural equality of JSON values. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]));
  }
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Whether every field `desired` states has that value in `actual`. Extra fields in `actual` are
 * ignored (the server's defaults: imagePullPolicy, terminationMessagePath …); arrays must have the
 * same length and match element by element.
 */
export function isSubset(desired: unknown, actual: unknown): boolean {
  if (desired === undefined) return true;
  if (desired === null || typeof desired !== 'object') return desired === actual || (typeof desired === 'number' && String(desired) === actual);
  if (actual === null || typeof actual !== 'object') return false;
  if (Array.isArray(desired)) {
    return Array.isArray(actual) && desired.length === actual.length && desired.every((v, i) => isSubset(v, actual[i]));
  }
  return Object.entries(desired as object).every(([k, v]) => isSubset(v, (actual as Record<string, unknown>)[k]));
}
