/**
 * Memos of pure parses, so the operator decodes each key, certificate and CSR once rather than at
 * every reconcile that reads it. Parsing again took about a fifth of the operator's CPU in a CA
 * issuance profile (bench/README.md): a CA's key was parsed, exported and imported into WebCrypto
 * for every certificate it signed, and a Certificate's Secret was parsed three times per reconcile.
 *
 * What a memo returns is shared by every caller: read-only (KeyObjects and X509Certificates are
 * immutable; the objects built here are frozen).
 */

/**
 * A parse of text, memoized for the `entries` texts used last. A text over `maxText` characters
 * (no real key, certificate chain or CSR is) is parsed every time and never kept, so a tenant's
 * oversized objects cannot fill the memory. A parse that throws is not kept either: it throws again.
 */
export function textMemo<V>(entries: number, maxText: number, parse: (text: string) => V): (text: string) => V {
  const kept = new Map<string, V>();
  return (text) => {
    if (kept.has(text)) {
      const hit = kept.get(text)!;
      // Map order is insertion order: moved to the back, the least recently used is first.
      kept.delete(text);
      kept.set(text, hit);
      return hit;
    }
    const value = parse(text);
    if (text.length <= maxText) {
      kept.set(text, value);
      if (kept.size > entries) kept.delete(kept.keys().next().value!);
    }
    return value;
  };
}

/**
 * A derivation from an object (a KeyObject), kept as long as the object lives. A memoized parse
 * hands out the same object for the same text, so what is derived from it is derived once.
 */
export function objectMemo<K extends object, V>(derive: (key: K) => V): (key: K) => V {
  const kept = new WeakMap<K, V>();
  return (key) => {
    if (kept.has(key)) return kept.get(key)!;
    const value = derive(key);
    kept.set(key, value);
    return value;
  };
}
