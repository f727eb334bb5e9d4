import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { freePort } from '../net/ports.js';
import { httpGet, httpPostJson } from '../net/probe.js';
import { createCertificateAuthority } from '../pki/pki.js';
import { ManagedProcess } from '../process/managed-process.js';
import { guardDir, releaseDir } from '../process/watchdog.js';
import { StopWaiting, waitFor } from '../wait.js';

export interface PebbleOptions {
  /** The port Pebble connects to for HTTP-01 validation (on the address names resolve to). */
  httpPort?: number;
  /**
   * Keep Pebble's defaults: a random 0–5 s sleep before each validation and 5% of valid nonces
   * rejected. Off by default (PEBBLE_VA_NOSLEEP=1, PEBBLE_WFE_NONCEREJECT=0) for fast tests.
   */
  realistic?: boolean;
  /** External account binding keys (kid → base64url HMAC key); makes EAB required. */
  externalAccountBindings?: Record<string, string>;
  /**
   * Copy the first DNS name into the subject's common name, as Let's Encrypt's classic profile
   * does (on by default: a certificate is then not exactly what the CSR asked for).
   */
  promoteCommonName?: boolean;
  /**
   * More profiles (name → lifetime in seconds) beside `default`: Let's Encrypt's `shortlived` (518,400
   * s), or minutes to compress time in a bench. An order that names none then gets a random one.
   */
  profiles?: Record<string, { validityPeriod: number; description?: string }>;
  /** Extra PEBBLE_* environment. */
  env?: Record<string, string>;
  /**
   * The DNS server Pebble resolves through (its validations: A records for HTTP-01, TXT records for
   * DNS-01), e.g. a BIND started by startBind. Default: pebble-challtestsrv, every name 127.0.0.1.
   */
  resolver?: string;
}

export interface Pebble {
  directoryUrl: string;
  managementUrl: string;
  /** pebble-challtestsrv's DNS server: every name resolves to 127.0.0.1. */
  dnsServer: string;
  httpPort: number;
  /** The CA of Pebble's own TLS certificate: what an Issuer's caBundle must trust. */
  tlsCaPem: string;
  /** Pebble's issuing root (regenerated on every start). */
  root(): Promise<string>;
  /**
   * What Pebble answers from now on for one certificate's renewal info (RFC 9773), instead of its
   * own window (the middle third of the lifetime ± a day): `{ suggestedWindow: { start, end } }`,
   * or any text, to see what a client makes of a malformed answer.
   */
  setRenewalInfo(certificatePem: string, answer: object | string): Promise<void>;
  /** Stops Pebble (the DNS server keeps running): the ACME server goes away. */
  stopAcme(): Promise<void>;
  /** Starts Pebble again on the same ports. It remembers nothing: accounts and orders are gone. */
  startAcme(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Pebble, Let's Encrypt's ACME test server, with pebble-challtestsrv as its DNS (every name →
 * 127.0.0.1), on free loopback ports. Its TLS certificate is minted here, so nothing depends on the
 * certificates in Pebble's module (which expire).
 */
export async function startPebble(options: PebbleOptions = {}): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'opkit-pebble-'));
  guardDir(dir);
  const [acmePort, mgmtPort, dnsPort, dnsMgmtPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const httpPort = options.httpPort ?? (await freePort());
  const ca = await createCertificateAuthority('opkit pebble TLS CA', 30);
  const serving = await ca.issue({ commonName: 'localhost', usage: 'server', dnsNames: ['localhost', 'pebble'], ipAddresses: ['127.0.0.1'] });
  writeFileSync(join(dir, 'cert.pem'), serving.cert);
  writeFileSync(join(dir, 'key.pem'), serving.key);
  writeFileSync(
    join(dir, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${mgmtPort}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort,
        tlsPort: await freePort(),
        ocspResponderURL: '',
        externalAccountBindingRequired: !!options.externalAccountBindings,
        ...(options.externalAccountBindings ? { externalAccountMACKeys: options.externalAccountBindings } : {}),
        domainBlocklist: ['blocked.example.com'],
        retryAfter: { authz: 1, order: 1 },
        keyAlgorithm: 'ecdsa',
        // Only the default unless asked: Pebble gives an order that names no profile a random one
        // of those it has ("in true pebble chaos fashion"), so a second profile would make every
        // other test's lifetimes random.
        profiles: {
          default: { description: 'default', validityPeriod: 7_776_000, promoteCommonName: options.promoteCommonName ?? true },
          ...Object.fromEntries(
            Object.entries(options.profiles ?? {}).map(([name, p]) => [name, { description: p.description ?? name, promoteCommonName: false, ...p }]),
          ),
        },
      },
    }),
  );
  const dns = new ManagedProcess({
    name: 'pebble-challtestsrv',
    command: findBinary('pebble-challtestsrv'),
    args: [
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
      '-dnsserver',
      `127.0.0.1:${dnsPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-doh',
      '',
      '-management',
      `127.0.0.1:${dnsMgmtPort}`,
    ],
    logFile: join(dir, 'challtestsrv.log'),
  });
  const env = {
    ...process.env,
    ...(options.realistic ? {} : { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' }),
    PEBBLE_AUTHZREUSE: '0',
    ...options.env,
  };
  let acme: ManagedProcess | undefined;
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const startAcme = async () => {
    acme = new ManagedProcess({
      name: 'pebble',
      command: findBinary('pebble'),
      args: ['-config', join(dir, 'pebble.json'), '-dnsserver', options.resolver ?? `127.0.0.1:${dnsPort}`],
      logFile: join(dir, 'pebble.log'),
      env,
      cwd: dir,
    });
    acme.start();
    await waitFor(
      'Pebble to serve its directory',
      async () => {
        if (!acme?.running) throw new StopWaiting(`pebble exited:\n${acme?.recentOutput()}`);
        return (await httpGet(directoryUrl, { ca: ca.cert })).status === 200;
      },
      { timeoutMs: 30_000 },
    );
  };
  dns.start();
  // Pebble resolves through this server and callers query it as soon as startPebble returns, so it
  // must answer first: on a loaded machine Pebble has served its directory before challtestsrv had
  // bound its port (ECONNREFUSED in CI).
  const probe = new Resolver({ timeout: 500, tries: 1 });
  probe.setServers([`127.0.0.1:${dnsPort}`]);
  await waitFor(
    'pebble-challtestsrv to answer DNS',
    async () => {
      if (!dns.running) throw new StopWaiting(`pebble-challtestsrv exited:\n${dns.recentOutput()}`);
      return (await probe.resolve4('ready.pebble.test')).includes('127.0.0.1');
    },
    { timeoutMs: 30_000 },
  );
  await startAcme();
  const managementUrl = `https://127.0.0.1:${mgmtPort}`;
  return {
    directoryUrl,
    managementUrl,
    dnsServer: `127.0.0.1:${dnsPort}`,
    httpPort,
    tlsCaPem: ca.cert,
    async root() {
      return (await httpGet(`${managementUrl}/roots/0`, { ca: ca.cert })).body;
    },
    async setRenewalInfo(certificatePem, answer) {
      const r = await httpPostJson(
        `${managementUrl}/set-renewal-info/`,
        { Certificate: certificatePem, ARIResponse: typeof answer === 'string' ? answer : JSON.stringify(answer) },
        { ca: ca.cert },
      );
      if (r.status !== 200) throw new Error(`Pebble refused the renewal info (${r.status}): ${r.body}`);
    },
    async stopAcme() {
      await acme?.stop(5_000);
    },
    startAcme,
    async stop() {
      await acme?.stop(5_000);
      await dns.stop(5_000);
      rmSync(dir, { recursive: true, force: true });
      releaseDir(dir);
    },
  };
}
