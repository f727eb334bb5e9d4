import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet } from '../net/probe.js';
import { startPebble, type Pebble } from './pebble.js';

describe('startPebble', () => {
  let pebble: Pebble;
  beforeAll(async () => {
    pebble = await startPebble();
  });
  afterAll(() => pebble?.stop());

  it('serves an ACME directory over TLS trusted through tlsCaPem', async () => {
    const dir = JSON.parse((await httpGet(pebble.directoryUrl, { ca: pebble.tlsCaPem })).body) as Record<string, string>;
    expect(Object.keys(dir)).toEqual(expect.arrayContaining(['newAccount', 'newNonce', 'newOrder']));
    await expect(httpGet(pebble.directoryUrl)).rejects.toThrow(/self-signed|unable to verify|issuer/i);
  });

  it('resolves every name to 127.0.0.1 through its DNS server', async () => {
    const r = new Resolver();
    r.setServers([pebble.dnsServer]);
    expect(await r.resolve4('anything.example.test')).toEqual(['127.0.0.1']);
  });

  it('exposes its issuing root as PEM', async () => {
    expect(await pebble.root()).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });

  it('can be stopped and started again on the same address, forgetting everything', async () => {
    const before = await pebble.root();
    await pebble.stopAcme();
    await expect(httpGet(pebble.directoryUrl, { ca: pebble.tlsCaPem })).rejects.toThrow(/ECONNREFUSED/);
    await pebble.startAcme();
    expect((await httpGet(pebble.directoryUrl, { ca: pebble.tlsCaPem })).status).toBe(200);
    expect(await pebble.root()).not.toBe(before);
  });
});
