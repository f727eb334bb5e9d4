import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { createSocket } from 'node:dgram';
import { DnsError, query } from './client.js';
import { CLASS, decodeMessage, encodeMessage, TYPE, txtData, type Message, type ResourceRecord } from './message.js';
import { signRequest, verifyResponse, type TsigKey } from './tsig.js';

// What a DNS server the operator talks to may send: a tenant's own server (RFC 2136 for DNS-01),
// or anything on the path. Any answer gives a message or a DnsError, soon, in bounded memory.

const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/);
const name = fc.array(label, { minLength: 1, maxLength: 5 }).map((ls) => ls.join('.'));
const u16 = fc.integer({ min: 0, max: 0xffff });
const record: fc.Arbitrary<ResourceRecord> = fc.oneof(
  fc.record({ name, type: fc.constant(TYPE.TXT), class: fc.constant(CLASS.IN), ttl: fc.nat(), data: fc.string({ maxLength: 300 }).map(txtData) }),
  fc.record({
    name,
    type: fc.constantFrom(TYPE.A, TYPE.AAAA, TYPE.OPT),
    class: u16,
    ttl: fc.nat(),
    data: fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b)),
  }),
);
const message: fc.Arbitrary<Message> = fc.record({
  id: u16,
  flags: u16,
  questions: fc.array(fc.record({ name, type: u16, class: u16 }), { maxLength: 3 }),
  answers: fc.array(record, { maxLength: 4 }),
  authorities: fc.array(record, { maxLength: 3 }),
  additionals: fc.array(record, { maxLength: 3 }),
});

/** A valid message's bytes, then damaged: bytes changed, cut short, or spliced with garbage. */
const damaged = fc
  .tuple(
    message.map((m) => encodeMessage(m)),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
    fc.option(fc.nat()),
    fc.uint8Array({ maxLength: 40 }),
  )
  .map(([wire, flips, cut, tail]) => {
    const b = Buffer.from(wire);
    for (const [at, v] of flips) if (b.length) b[at % b.length] = v;
    const end = cut === null ? b.length : cut % (b.length + 1);
    return Buffer.concat([b.subarray(0, end), cut === null ? Buffer.alloc(0) : Buffer.from(tail)]);
  });
const anyBytes = fc.oneof(
  damaged,
  fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b)),
);

const key: TsigKey = { name: 'acme-update', algorithm: 'HMACSHA256', secret: Buffer.from('not a real secret, only for fuzzing').toString('base64') };

/** A UDP server answering every query with the bytes of the input it is given. */
let answerWith: Buffer = Buffer.alloc(0);
let server: Promise<string> | undefined;
const hostileServer = () =>
  (server ??= new Promise((resolve) => {
    const sock = createSocket('udp4');
    sock.on('message', (_, from) => sock.send(answerWith, from.port, from.address));
    sock.bind(0, '127.0.0.1', () => {
      sock.unref();
      resolve(`127.0.0.1:${sock.address().port}`);
    });
  }));

export const targets = fuzzTargets(
  {
    name: 'decodeMessage: a message or a DnsError, for any bytes',
    arbitrary: anyBytes,
    run: (b: Buffer) => decodeMessage(b),
    expected: refusesWith(DnsError),
  },
  {
    name: 'encodeMessage then decodeMessage: the same message',
    arbitrary: message,
    run: (m: Message) => {
      const back = decodeMessage(encodeMessage(m));
      const strip = (rs: ResourceRecord[]) => rs.map(({ value: _, ...r }) => ({ ...r, data: Buffer.from(r.data).toString('hex') }));
      const same = JSON.stringify({ ...back, answers: strip(back.answers), authorities: strip(back.authorities), additionals: strip(back.additionals) });
      const want = JSON.stringify({ ...m, answers: strip(m.answers), authorities: strip(m.authorities), additionals: strip(m.additionals) });
      if (same !== want) throw new Error(`round trip changed the message:\n${want}\n${same}`);
    },
  },
  {
    name: 'verifyResponse: a verdict or a DnsError, for any TSIG record a server signs with',
    arbitrary: fc.tuple(message, fc.uint8Array({ maxLength: 120 })),
    run: ([m, rdata]: [Message, Uint8Array]) => {
      const request = signRequest(encodeMessage(m), m, key);
      const response: Message = {
        ...m,
        additionals: [...m.additionals, { name: key.name, type: TYPE.TSIG, class: CLASS.ANY, ttl: 0, data: Buffer.from(rdata) }],
      };
      const wire = encodeMessage(response);
      return verifyResponse(wire, decodeMessage(wire), key, request.mac);
    },
    expected: refusesWith(DnsError),
  },
  {
    name: 'query: an answer or a DnsError, whatever a server sends back',
    arbitrary: anyBytes,
    run: async (b: Buffer) => {
      const s = await hostileServer();
      answerWith = b;
      await query(s, 'example.com', TYPE.TXT, { timeoutMs: 500 });
    },
    expected: refusesWith(DnsError),
  },
);
