import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { captureLogger } from '../testing/log-capture.js';
import { CertificateFiles } from './certificate-files.js';
import { issueCa, issueServing } from './self-signed.js';
import { WebhookServer } from './server.js';

const presentedSerial = (port: number) =>
  new Promise<string>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(s.getPeerX509Certificate()!.serialNumber);
      s.end();
    });
    s.on('error', reject);
  });

describe('a webhook certificate kept by someone else (OLM, a mounted Secret)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opkit-certdir-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const ca = issueCa('olm', Date.now() - 60_000, Date.now() + 86_400_000);
  const write = () => {
    const pair = issueServing(ca, ['127.0.0.1'], Date.now() - 60_000, Date.now() + 86_400_000);
    writeFileSync(join(dir, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, 'tls.key'), pair.key);
    return pair;
  };

  it('serves the files, takes a new pair without a restart, and keeps the last good one when the files break', async () => {
    write();
    const logs = captureLogger();
    const server = new WebhookServer({ host: '127.0.0.1', port: 0 }, logs.logger);
    const files = new CertificateFiles(dir, (p) => server.setCertificate(p), logs.logger, 50);
    await files.start();
    await server.start();
    try {
      const first = await presentedSerial(server.port!);
      write();
      await expect.poll(() => presentedSerial(server.port!), { timeout: 5_000 }).not.toBe(first);
      const second = await presentedSerial(server.port!);
      writeFileSync(join(dir, 'tls.key'), 'not a key');
      await expect.poll(() => files.problem, { timeout: 5_000 }).toMatch(/^webhook certificate in .*opkit-certdir-.*: /);
      expect(await presentedSerial(server.port!)).toBe(second);
    } finally {
      files.stop();
      await server.stop();
    }
  });
});
