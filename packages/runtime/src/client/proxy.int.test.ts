import { waitFor } from '@opkit/testing';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cache } from '../cache/cache.js';
import { useControlPlane } from '../testing/control-plane-suite.js';
import { captureLogger } from '../testing/log-capture.js';
import { Client } from './client.js';
import { ConfigMap, Namespace } from './kind.js';
import { KubeConfig } from './kubeconfig.js';
import { Transport } from './transport.js';

/** A forward proxy that speaks CONNECT only, as corporate egress proxies do, and notes every tunnel. */
function connectProxy(mode: { refuse?: boolean }) {
  const tunnels: { target: string; auth?: string }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.once('data', (head) => {
      const text = head.toString('latin1');
      const target = /^CONNECT (\S+) HTTP\/1\.1\r\n/.exec(text)?.[1];
      const auth = /\r\nProxy-Authorization: (.*)\r\n/i.exec(text)?.[1];
      if (!target) return void client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      tunnels.push({ target, auth });
      if (mode.refuse) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n');
      const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
      const upstream = connect(port, host, () => {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        upstream.pipe(client).pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  return {
    tunnels,
    listen: () => new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as { port: number }).port))),
    close: () => new Promise<void>((r) => (sockets.forEach((s) => s.destroy()), server.close(() => r()))),
  };
}

describe("reaching the API server through an HTTP proxy (the kubeconfig's proxy-url)", () => {
  const suite = useControlPlane({}, async (_, admin) => {
    await admin.create(Namespace, { metadata: { name: 'behind' } });
  });
  const proxy = connectProxy({});
  const refusing = connectProxy({ refuse: true });
  let port = 0;
  let refusingPort = 0;
  beforeAll(async () => {
    port = await proxy.listen();
    refusingPort = await refusing.listen();
  });
  afterAll(async () => {
    await proxy.close();
    await refusing.close();
  });
  const through = (proxyUrl: string) => {
    const doc = parse(readFileSync(suite.plane.kubeconfigPath, 'utf8')) as { clusters: { cluster: Record<string, unknown> }[] };
    for (const c of doc.clusters) c.cluster['proxy-url'] = proxyUrl;
    return KubeConfig.fromText(stringify(doc), process.cwd(), 'proxied');
  };

  it('sends requests and watches through the tunnel, with the credentials in the proxy URL, TLS end to end', async () => {
    const transport = new Transport(through(`http://ops:s%40cret@127.0.0.1:${port}`));
    const client = new Client(transport, { fieldManager: 'proxied' });
    await client.create(ConfigMap, { metadata: { namespace: 'behind', name: 'via-proxy' }, data: { a: '1' } });
    const apiServer = new URL(suite.plane.kubeConfig.getCurrentCluster()!.server).host;
    expect(proxy.tunnels[0]).toEqual({ target: apiServer, auth: `Basic ${Buffer.from('ops:s@cret').toString('base64')}` });
    // A watch through the same tunnel sees a change made directly.
    const cache = new Cache(transport, captureLogger().logger, { namespaces: ['behind'] });
    cache.start();
    try {
      expect((await cache.get(ConfigMap, { namespace: 'behind', name: 'via-proxy' }))?.data).toEqual({ a: '1' });
      await suite.admin.patch(ConfigMap, { namespace: 'behind', name: 'via-proxy' }, { data: { a: '2' } });
      await waitFor('the change through the watch', async () => (await cache.get(ConfigMap, { namespace: 'behind', name: 'via-proxy' }))?.data?.a === '2');
    } finally {
      await cache.stop();
    }
    // Every connection went through the proxy: none reached the API server directly.
    expect(proxy.tunnels.every((t) => t.target === apiServer)).toBe(true);
  });

  it("says so when the proxy refuses the tunnel, with the proxy's words", async () => {
    const client = new Client(new Transport(through(`http://127.0.0.1:${refusingPort}`)), { fieldManager: 'proxied' });
    await expect(client.list(ConfigMap, { namespace: 'behind' })).rejects.toThrow(
      /refused the tunnel to 127\.0\.0\.1:\d+: 407 Proxy Authentication Required \(it wants credentials/,
    );
  });
});
