import type { Static } from '@sinclair/typebox';
import type { Solver } from '../api/v1/acme-issuer.js';

export type SolverSpec = Static<typeof Solver>;

/**
 * The solver for one identifier, by cert-manager's precedence: an exact `dnsNames` match beats the
 * most specific matching `dnsZones` entry, which beats a solver with no name selector. Within a
 * tier, more matching `matchLabels` wins, then the earlier solver. Labels that do not match rule a
 * solver out. Undefined when none fits.
 */
export function pickSolver(solvers: readonly SolverSpec[], dnsName: string, labels: Record<string, string> = {}): SolverSpec | undefined {
  const name = dnsName.replace(/^\*\./, '');
  let best: { s: SolverSpec; tier: number; zone: number; labels: number; index: number } | undefined;
  solvers.forEach((s, index) => {
    if (!s.http01) return; // only HTTP-01 is implemented
    const sel = s.selector ?? {};
    const ml = Object.entries(sel.matchLabels ?? {});
    if (!ml.every(([k, v]) => labels[k] === v)) return;
    let tier = 0;
    let zone = 0;
    if (sel.dnsNames?.length) {
      if (!sel.dnsNames.includes(dnsName) && !sel.dnsNames.includes(name)) return;
      tier = 2;
    } else if (sel.dnsZones?.length) {
      const zones = sel.dnsZones.filter((z) => name === z || name.endsWith(`.${z}`));
      if (!zones.length) return;
      tier = 1;
      zone = Math.max(...zones.map((z) => z.length));
    }
    const cand = { s, tier, zone, labels: ml.length, index };
    if (!best || cand.tier > best.tier || (cand.tier === best.tier && (cand.zone > best.zone || (cand.zone === best.zone && cand.labels > best.labels)))) best = cand;
  });
  return best?.s;
}
