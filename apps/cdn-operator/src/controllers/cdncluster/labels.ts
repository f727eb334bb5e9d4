export const MANAGED_BY = 'cdn-operator';
export const CONFIG_HASH_ANNOTATION = 'cdn.opkit.dev/config-hash';

export const selectorLabels = (name: string): Record<string, string> => ({
  'app.kubernetes.io/name': 'cdn',
  'app.kubernetes.io/instance': name,
});

export const objectLabels = (name: string, role: string): Record<string, string> => ({
  ...selectorLabels(name),
  'app.kubernetes.io/component': role,
  'app.kubernetes.io/managed-by': MANAGED_BY,
});
