import { fuzzTargets } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { parseResourceList } from './discovery.js';

// Discovery answers come from the API server, and for aggregated groups from whoever serves them: a
// list of well-formed resources (or none), for any JSON.
const resource = fc.record(
  {
    name: fc.oneof(fc.constantFrom('pods', 'deployments/scale', 'WIDGETS', ''), fc.string({ maxLength: 20 })),
    kind: fc.oneof(fc.constantFrom('Pod', 'Deployment', '1x', ''), fc.string({ maxLength: 20 })),
    namespaced: fc.oneof(fc.boolean(), fc.constant('true'), fc.constant(null)),
    verbs: fc.oneof(fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 30 }), fc.constant('get')),
  },
  { requiredKeys: [] },
);
export const targets = fuzzTargets({
  name: 'parseResourceList: only well-formed resources, for any JSON',
  arbitrary: fc.oneof(
    fc.json().map((j) => JSON.parse(j) as unknown),
    fc.record({ resources: fc.array(resource, { maxLength: 20 }) }),
  ),
  run: (body: unknown) => {
    for (const r of parseResourceList(body))
      if (r.name.includes('/') || typeof r.namespaced !== 'boolean' || !/^[A-Za-z]/.test(r.kind) || r.verbs.length > 20)
        throw new Error(`kept ${JSON.stringify(r)}`);
  },
});
