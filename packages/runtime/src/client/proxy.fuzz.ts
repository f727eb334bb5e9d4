import { fuzzTargets, refusesWith } from '@opkit/testing/fuzz';
import fc from 'fast-check';
import { parseConnectResponse, ProxyTunnelError } from './proxy.js';

// A proxy's answer to CONNECT comes from outside (a proxy, or whatever answers on its port): a
// status, "not yet", or a ProxyTunnelError, for any bytes.
const piece = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a).toString('latin1')),
  fc.constantFrom('HTTP/1.1 ', 'HTTP/1.0 200 OK', '407', '\r\n', '\r\n\r\n', ' ', 'Proxy-Agent: x'),
);
export const targets = fuzzTargets({
  name: 'parseConnectResponse: a status, undefined, or a ProxyTunnelError, for any bytes',
  arbitrary: fc.oneof(
    fc.array(piece, { maxLength: 30 }).map((p) => Buffer.from(p.join(''), 'latin1')),
    fc.constant(Buffer.alloc(70_000, 'x')),
  ),
  run: (buf: Buffer) => {
    const r = parseConnectResponse(buf);
    if (r && (r.status < 100 || r.status > 999 || r.reason.length > 200)) throw new Error('out of bounds');
  },
  expected: refusesWith(ProxyTunnelError),
});
