import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { pino } from 'pino';
import { Gizmos } from '../../examples/webhooks/gizmo.js';
import { keepRequester, recordRequester } from '../../examples/webhooks/ticket.js';
import { Converter } from './conversion.js';
import { bundleCas, heldCertificates, pemKeys, trustedBy } from './rotation.js';
import { admissionRoute, conversionRoute, ReviewError } from './webhooks.js';

// The webhook Service answers the API server, and any pod that reaches it: any body is a review
// answered or a ReviewError (400), never a crash. The certificate Secret the webhooks read may
// have been written by anyone with access to it: reading it never throws.

const log = pino({ level: 'silent' });
const converter = new Converter();
converter.add(Gizmos);
const routes = [admissionRoute(recordRequester, log), admissionRoute(keepRequester, log)];
const convert = conversionRoute(converter, log);

const json = fc.jsonValue({ maxDepth: 4 });
const obj = fc.oneof(
  json,
  fc.record(
    {
      apiVersion: fc.oneof(fc.constantFrom('test.opkit.dev/v1alpha1', 'test.opkit.dev/v1beta1', 'test.opkit.dev/v1', 'other/v1', 'x'), json),
      kind: fc.oneof(fc.constantFrom('Gizmo', 'Ticket'), json),
      metadata: fc.oneof(
        fc.record(
          { name: fc.string({ maxLength: 8 }), annotations: fc.oneof(fc.dictionary(fc.string({ maxLength: 30 }), fc.string({ maxLength: 8 })), json) },
          { requiredKeys: [] },
        ),
        json,
      ),
      spec: json,
    },
    { requiredKeys: [] },
  ),
);
const admission = fc.record(
  {
    request: fc.oneof(
      json,
      fc.record(
        {
          uid: fc.oneof(fc.uuid(), json),
          operation: fc.oneof(fc.constantFrom('CREATE', 'UPDATE', 'DELETE'), json),
          userInfo: fc.oneof(fc.record({ username: fc.string({ maxLength: 8 }), groups: fc.array(fc.string({ maxLength: 8 })) }), json),
          object: obj,
          oldObject: obj,
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);
const conversion = fc.record(
  {
    request: fc.oneof(
      json,
      fc.record(
        {
          uid: fc.oneof(fc.uuid(), json),
          desiredAPIVersion: fc.oneof(fc.constantFrom('test.opkit.dev/v1alpha1', 'test.opkit.dev/v1beta1'), json),
          objects: fc.oneof(fc.array(obj, { maxLength: 3 }), json),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);
const pemish = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.base64String({ maxLength: 200 }).map((b) => `-----BEGIN CERTIFICATE-----\n${b}\n-----END CERTIFICATE-----\n`),
  fc.base64String({ maxLength: 200 }).map((b) => `-----BEGIN PRIVATE KEY-----\n${b}\n-----END PRIVATE KEY-----\n`),
);

export const targets = fuzzTargets(
  {
    name: 'admission routes: a review answered or a ReviewError, for any body',
    arbitrary: fc.oneof(admission, json),
    run: async (body: unknown) => {
      for (const route of routes) await route(body);
    },
    expected: refusesWith(ReviewError),
  },
  {
    name: 'the conversion route: a review answered (converted or failed) or a ReviewError, for any body',
    arbitrary: fc.oneof(conversion, json),
    run: (body: unknown) => convert(body),
    expected: refusesWith(ReviewError),
  },
  {
    name: 'reading the webhook certificate Secret: never a throw, whatever it holds',
    arbitrary: fc.record({ caCert: pemish, caKey: pemish, cert: pemish, key: pemish }),
    run: (d: { caCert: string; caKey: string; cert: string; key: string }) => {
      heldCertificates(d);
      bundleCas(d.caCert);
      pemKeys(d.caKey);
      trustedBy(Buffer.from(d.caCert).toString('base64'));
    },
  },
);
