/**
 * The dependency cycle through `start`, if there is one: `['a', 'b', 'a']`. Edges follow each
 * cluster's sources in spec order; only existing clusters are followed (a missing source is a
 * wait, not a cycle). A cluster that merely depends on a cycle is not in it.
 */
export function findCycle(start: string, sourcesOf: (name: string) => string[] | undefined): string[] | undefined {
  const path: string[] = [start];
  const visited = new Set<string>();
  const walk = (node: string): string[] | undefined => {
    for (const next of sourcesOf(node) ?? []) {
      if (next === start) return [...path, start];
      if (visited.has(next) || sourcesOf(next) === undefined) continue;
      visited.add(next);
      path.push(next);
      const found = walk(next);
      if (found) return found;
      path.pop();
    }
    return undefined;
  };
  return walk(start);
}
