import { createCertificateAuthority, httpGet, type Pebble } from '@opkit/testing';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * Pebble's renewal windows, scaled to compressed lifetimes. Pebble suggests a day either side of
 * the point two thirds into a certificate's life, clamped to its validity: for a certificate of
 * minutes that is its whole life, so nothing could be said about respecting windows. This server
 * stands in front of Pebble's directory and renewal info only: the directory it serves is Pebble's
 * with `renewalInfo` pointing here, so every other request goes to Pebble itself; each renewal info
 * is Pebble's, the window narrowed to a tenth of the lifetime around the same point, as Let's
 * Encrypt's two days are of 90 days.
 */
export interface AriScaler {
  directoryUrl: string;
  /** The CA of this server's TLS certificate (an issuer's caBundle trusts it and Pebble's). */
  caPem: string;
  /** Renewal-info requests answered so far. */
  requests: number;
  stop(): Promise<void>;
}

export async function startAriScaler(pebble: Pebble): Promise<AriScaler> {
  const ca = await createCertificateAuthority('opkit bench ARI scaler', 2);
  const serving = await ca.issue({ commonName: 'localhost', usage: 'server', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const directory = JSON.parse((await httpGet(pebble.directoryUrl, { ca: pebble.tlsCaPem })).body) as Record<string, unknown>;
  const upstream = String(directory.renewalInfo);
  let self = '';
  const state = { requests: 0 };
  const server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    void (async (): Promise<void> => {
      const path = req.url ?? '/';
      if (path === '/dir') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...directory, renewalInfo: `${self}/renewalInfo` }));
        return;
      }
      const id = /^\/renewalInfo\/([\w.-]+)$/.exec(path)?.[1];
      if (!id) {
        res.writeHead(404).end();
        return;
      }
      state.requests++;
      const answer = await httpGet(`${upstream}/${id}`, { ca: pebble.tlsCaPem, timeoutMs: 10_000 });
      if (answer.status !== 200) {
        res.writeHead(answer.status, { 'content-type': 'application/problem+json' }).end(answer.body);
        return;
      }
      const { suggestedWindow: w } = JSON.parse(answer.body) as { suggestedWindow: { start: string; end: string } };
      // Pebble's window, clamped to the validity: [notBefore, notAfter] for these lifetimes.
      const [start, end] = [Date.parse(w.start), Date.parse(w.end)];
      const ideal = end - (end - start) / 3;
      const half = (end - start) / 20;
      res.writeHead(200, { 'content-type': 'application/json', 'retry-after': '21600' });
      res.end(JSON.stringify({ suggestedWindow: { start: new Date(ideal - half).toISOString(), end: new Date(ideal + half).toISOString() } }));
    })().catch((err: Error) => res.writeHead(502).end(err.message));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  self = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    directoryUrl: `${self}/dir`,
    caPem: ca.cert,
    get requests() {
      return state.requests;
    },
    stop: () => new Promise((r) => server.close(() => r())),
  };
}
