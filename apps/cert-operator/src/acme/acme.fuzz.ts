import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeSession, AcmeUnavailableError } from './client.js';
import { decodeRenewalInfo, RenewalInfoError } from './renewal-info.js';

// An ACME server is named by a tenant's Issuer: it may answer anything. Every call gives its
// result or one of the session's typed errors, within the request bound.

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = fc.jsonValue({ maxDepth: 3 });
const url = (path: string) => fc.constantFrom(`BASE${path}`, 'not a url', 'http://127.0.0.1:1/x', '');
const directory = fc.record(
  {
    newNonce: url('/nonce'),
    newAccount: url('/account'),
    newOrder: url('/order'),
    revokeCert: url('/revoke'),
    keyChange: url('/key'),
    renewalInfo: url('/renewal-info'),
    meta: fc.record({ profiles: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), json) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const time = fc.oneof(fc.constantFrom('2026-11-27T10:00:00Z', '2026-11-28T10:00:00.5Z', 'soon'), fc.string({ maxLength: 10 }));
const renewalWindow = fc.record({ suggestedWindow: fc.record({ start: time, end: time }, { requiredKeys: [] }), explanationURL: json }, { requiredKeys: [] });
const problem = fc.record(
  {
    type: fc.constantFrom(
      'urn:ietf:params:acme:error:badNonce',
      'urn:ietf:params:acme:error:rateLimited',
      'urn:ietf:params:acme:error:malformed',
      'about:blank',
    ),
    detail: fc.string({ maxLength: 20 }),
  },
  { requiredKeys: [] },
);
const order = fc.record(
  {
    status: fc.constantFrom('pending', 'ready', 'valid', 'invalid'),
    authorizations: fc.array(url('/authz'), { maxLength: 2 }),
    finalize: url('/finalize'),
    identifiers: json,
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  directory.map((d) => JSON.stringify(d)),
  problem.map((p) => JSON.stringify(p)),
  order.map((o) => JSON.stringify(o)),
  renewalWindow.map((w) => JSON.stringify(w)),
  json.map((j) => JSON.stringify(j)),
  fc.string({ maxLength: 60 }),
);
const reply: fc.Arbitrary<Reply> = fc.record({
  status: fc.constantFrom(200, 201, 204, 301, 400, 403, 404, 429, 500, 503),
  headers: fc.record(
    {
      'replay-nonce': fc.string({ maxLength: 12 }),
      location: url('/acct/1'),
      'retry-after': fc.oneof(fc.nat({ max: 100_000 }).map(String), fc.string({ maxLength: 12 })),
      'content-type': fc.constantFrom('application/json', 'application/problem+json', 'text/plain'),
    },
    { requiredKeys: [] },
  ),
  body,
});

let replies: Reply[] = [];
let base: Promise<string> | undefined;
/** Answers the n-th request with the n-th reply (the last one again once they run out). */
const server = () =>
  (base ??= new Promise((resolve) => {
    let n = 0;
    const s = createServer((req, res) => {
      req.resume();
      const r = replies[Math.min(n++, replies.length - 1)] ?? { status: 500, headers: {}, body: '' };
      const headers = Object.fromEntries(
        Object.entries(r.headers).map(([k, v]) => [
          k,
          v.replaceAll('BASE', `http://127.0.0.1:${(s.address() as AddressInfo).port}`).replace(/[^\x20-\x7e]/g, ''),
        ]),
      );
      res.writeHead(r.status, headers);
      res.end(r.body.replaceAll('BASE', `http://127.0.0.1:${(s.address() as AddressInfo).port}`));
    });
    s.listen(0, '127.0.0.1', () => {
      s.unref();
      resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
    });
    reset = () => void (n = 0);
  }));
let reset: () => void = () => undefined;

const accountKeyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

/** A new session against the server, which answers with `rs` from its first request on. */
async function sessionAnswering(rs: Reply[]): Promise<{ root: string; session: AcmeSession }> {
  const root = await server();
  replies = rs;
  reset();
  return { root, session: new AcmeSession({ directoryUrl: `${root}/directory`, accountKeyPem }) };
}

export const targets = fuzzTargets(
  {
    name: 'an ACME session: a result or a typed error, whatever the server answers',
    arbitrary: fc.array(reply, { minLength: 1, maxLength: 6 }),
    run: async (rs: Reply[]) => {
      const { session } = await sessionAnswering(rs);
      await session.call((c) => c.createAccount({ termsOfServiceAgreed: true }));
      await session.call((c) => c.createOrder({ identifiers: [{ type: 'dns', value: 'example.com' }] }));
    },
    expected: refusesWith(AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeUnavailableError),
  },
  {
    name: "an ACME server's directory and renewal info: a decoded window or a typed error, whatever it answers",
    arbitrary: fc.array(reply, { minLength: 1, maxLength: 3 }),
    run: async (rs: Reply[]) => {
      const { root, session } = await sessionAnswering(rs);
      const { renewalInfo } = await session.directory();
      const answer = await session.renewalInfo(renewalInfo ?? `${root}/renewal-info`, 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE');
      return decodeRenewalInfo(answer.body);
    },
    expected: refusesWith(AcmeProblemError, AcmeProtocolError, AcmeRateLimitError, AcmeUnavailableError, RenewalInfoError),
  },
);
