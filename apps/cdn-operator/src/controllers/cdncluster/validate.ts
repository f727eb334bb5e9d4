import type { CdnClusterObject } from '../../api/v1/cdncluster.js';
import { parseOrigin } from '../../nginx/render.js';

/**
 * What the schema cannot check: regular expressions that compile, and a role that has somewhere
 * to send requests. Each problem is a sentence a user can act on.
 */
export function validateSpec(c: CdnClusterObject): string[] {
  const problems: string[] = [];
  const sources = c.spec.sources ?? [];
  for (const s of sources) {
    if (s.pathCondition === undefined) continue;
    try {
      new RegExp(s.pathCondition);
    } catch (err) {
      problems.push(
        `source ${s.name}: pathCondition ${JSON.stringify(s.pathCondition)} is not a valid regular expression (${(err as Error).message.replace(/^Invalid regular expression: /, '')})`,
      );
    }
  }
  if (c.spec.role === 'balancer') {
    if (!sources.length) problems.push('a balancer needs at least one source');
    if (c.spec.origin) problems.push('origin is for caches; a balancer routes to its sources');
  } else if (!sources.length && !c.spec.origin) {
    problems.push('a cache needs sources or an origin');
  }
  if (c.spec.origin) {
    try {
      parseOrigin(c.spec.origin);
    } catch (err) {
      problems.push(`origin ${JSON.stringify(c.spec.origin)}: ${(err as Error).message}`);
    }
  }
  return problems;
}
