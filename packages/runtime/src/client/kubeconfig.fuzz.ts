import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { KubeConfig, KubeconfigError } from './kubeconfig.js';

// A kubeconfig is a file from outside the operator (a mounted Secret, a user's machine): a
// KubeConfig or a KubeconfigError naming what is wrong and where, for any text.

const anyValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, anyValue);
const name = fc.constantFrom('a', 'b', 'c');
const doc = fc.record(
  {
    clusters: maybe(
      fc.array(
        fc.record(
          {
            name: maybe(name),
            cluster: maybe(
              fc.record(
                {
                  server: maybe(fc.constant('https://127.0.0.1:6443')),
                  'certificate-authority-data': maybe(fc.base64String({ maxLength: 12 })),
                  'insecure-skip-tls-verify': anyValue,
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
    ),
    users: maybe(
      fc.array(
        fc.record(
          {
            name: maybe(name),
            user: maybe(
              fc.record(
                {
                  token: anyValue,
                  'client-key-data': anyValue,
                  exec: maybe(fc.record({ command: anyValue, args: anyValue, env: anyValue }, { requiredKeys: [] })),
                  'auth-provider': anyValue,
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
    ),
    contexts: maybe(
      fc.array(
        fc.record(
          { name: maybe(name), context: maybe(fc.record({ cluster: maybe(name), user: maybe(name), namespace: anyValue }, { requiredKeys: [] })) },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
    ),
    'current-context': maybe(name),
  },
  { requiredKeys: [] },
);
const text = fc.oneof(
  doc.map((d) => stringify(d)),
  fc.string({ maxLength: 200 }),
  fc.constant('a: &a [*a, *a]\nb: *a\n'),
  fc.constant('- x\n- y\n'),
);

export const targets = fuzzTargets({
  name: 'KubeConfig.fromText: a kubeconfig or a KubeconfigError, for any text',
  arbitrary: text,
  run: (t: string) => {
    const kc = KubeConfig.fromText(t, '/nonexistent', 'fuzzed');
    kc.getCurrentCluster();
    kc.getContextObject(kc.getCurrentContext());
  },
  expected: refusesWith(KubeconfigError),
});
