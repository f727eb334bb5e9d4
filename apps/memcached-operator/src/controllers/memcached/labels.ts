/** Labels on everything the operator makes for one Memcached; the pod watch selects on the last one. */
export const MANAGED_BY = 'memcached-operator';

export const selectorLabels = (name: string): Record<string, string> => ({
  'app.kubernetes.io/name': 'memcached',
  'app.kubernetes.io/instance': name,
});

export const objectLabels = (name: string): Record<string, string> => ({
  ...selectorLabels(name),
  'app.kubernetes.io/managed-by': MANAGED_BY,
});

export const selectorString = (name: string): string =>
  Object.entries(selectorLabels(name))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
