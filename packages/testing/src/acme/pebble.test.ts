import { Resolver } from 'node:dns/promises';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinary } from '../assets/binaries.js';
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

describe('startPebble on a loaded machine', () => {
  // CI once saw ECONNREFUSED from the DNS server right after startPebble returned: Pebble answered
  // its directory before pebble-challtestsrv had bound its port. A DNS server that starts 2 s late
  // stands in for the loaded machine.
  it('returns only once its DNS server answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opkit-slow-dns-'));
    const slow = join(dir, 'pebble-challtestsrv');
    writeFileSync(slow, `#!/bin/sh\nsleep 2\nexec '${findBinary('pebble-challtestsrv')}' "$@"\n`);
    chmodSync(slow, 0o755);
    const saved = process.env.TEST_ASSET_PEBBLE_CHALLTESTSRV;
    process.env.TEST_ASSET_PEBBLE_CHALLTESTSRV = slow;
    let pebble: Pebble | undefined;
    try {
      pebble = await startPebble();
      const r = new Resolver({ timeout: 1_000, tries: 1 });
      r.setServers([pebble.dnsServer]);
      expect(await r.resolve4('anything.example.test')).toEqual(['127.0.0.1']);
    } finally {
      if (saved === undefined) delete process.env.TEST_ASSET_PEBBLE_CHALLTESTSRV;
      else process.env.TEST_ASSET_PEBBLE_CHALLTESTSRV = saved;
      await pebble?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
