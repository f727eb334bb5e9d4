import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { CommandError, run, type RunResult } from '../run.js';

/**
 * Signing and verifying OCI artifacts (images, charts, SBOM attestations) with cosign, built here
 * from its Go module. The key pair is cosign's own format (an encrypted private key, a PEM public
 * key); the tests make one per cluster. Real releases sign keyless (Fulcio and Rekor, the CI's
 * OIDC identity): docs/releasing.md says how. Without a transparency log here, signing skips the
 * upload and verifying skips the log (cosign's `--tlog-upload=false`, `--insecure-ignore-tlog`):
 * the key is the whole trust root, as for any key-based offline verification.
 */
export interface SigningKey {
  /** cosign.key: the encrypted private key. */
  privateKey: string;
  /** cosign.pub: what verifiers are given. */
  publicKey: string;
  password: string;
}

/** Refused: the artifact carries no signature the key verifies (cosign's words in `detail`). */
export class SignatureError extends Error {
  override name = 'SignatureError';
  constructor(
    readonly ref: string,
    readonly detail: string,
  ) {
    super(`${ref}: no valid signature by the given key: ${detail}`);
  }
}

/**
 * cosign with a private sigstore home (its TUF cache), so tests never touch the user's; the
 * user's registry credentials (docker's config) stay visible, so a private registry still works.
 */
function cosign(args: string[], home: string, password = ''): Promise<RunResult> {
  mkdirSync(home, { recursive: true });
  return run(findBinary('cosign'), args, {
    timeoutMs: 5 * 60_000,
    env: { ...process.env, ...dockerConfigEnv(), COSIGN_PASSWORD: password, TUF_ROOT: join(home, 'tuf'), HOME: home, COSIGN_YES: 'true' },
  });
}

/** DOCKER_CONFIG pinned to the user's (tools with a private HOME read registry credentials from there). */
export function dockerConfigEnv(env: NodeJS.ProcessEnv = process.env): { DOCKER_CONFIG: string } {
  return { DOCKER_CONFIG: env.DOCKER_CONFIG || join(env.HOME || homedir(), '.docker') };
}

/** cosign's words for a signature that is absent or does not verify (anything else is not a verdict on the artifact). */
const REFUSED = /no matching signatures|no signatures found|no matching attestations|none of the attestations matched/;

/** A new key pair under `dir` (cosign.key, cosign.pub). */
export async function generateKeyPair(dir: string, password = ''): Promise<SigningKey> {
  mkdirSync(dir, { recursive: true });
  await cosign(['generate-key-pair', '--output-key-prefix', join(dir, 'cosign')], join(dir, 'home'), password);
  return { privateKey: join(dir, 'cosign.key'), publicKey: join(dir, 'cosign.pub'), password };
}

/** Options every cosign call against a registry takes. */
const registryArgs = (plainHttp: boolean) => (plainHttp ? ['--allow-http-registry'] : []);

/** Signs `ref` (an image or chart, by digest: a tag could move between signing and use). */
export async function signArtifact(ref: string, key: SigningKey, opts: { plainHttp?: boolean; home: string }): Promise<void> {
  if (!ref.includes('@sha256:')) throw new Error(`${ref}: sign by digest, not by tag`);
  await cosign(['sign', '--key', key.privateKey, '--tlog-upload=false', ...registryArgs(!!opts.plainHttp), ref], opts.home, key.password);
}

/** Attaches an SBOM (SPDX JSON) to `ref` as a signed in-toto attestation. */
export async function attestSbom(ref: string, sbomFile: string, key: SigningKey, opts: { plainHttp?: boolean; home: string }): Promise<void> {
  if (!ref.includes('@sha256:')) throw new Error(`${ref}: attest by digest, not by tag`);
  await cosign(
    ['attest', '--key', key.privateKey, '--type', 'spdxjson', '--predicate', sbomFile, '--tlog-upload=false', ...registryArgs(!!opts.plainHttp), ref],
    opts.home,
    key.password,
  );
}

/** Runs a verification; cosign refusing the signature becomes a SignatureError, any other failure (network, timeout) stays what it is. */
async function verifying(ref: string, fn: () => Promise<RunResult>): Promise<RunResult> {
  try {
    return await fn();
  } catch (e) {
    const said = e instanceof CommandError ? `${e.result.stderr}\n${e.result.stdout}` : '';
    if (e instanceof CommandError && REFUSED.test(said)) throw new SignatureError(ref, said.trim().split('\n').pop() ?? '');
    throw e;
  }
}

/** Verifies `ref`'s signature with the public key; rejects with a SignatureError when none verifies. */
export async function verifySignature(ref: string, publicKey: string, opts: { plainHttp?: boolean; home: string }): Promise<void> {
  await verifying(ref, () => cosign(['verify', '--key', publicKey, '--insecure-ignore-tlog=true', ...registryArgs(!!opts.plainHttp), ref], opts.home));
}

/** Verifies `ref`'s SBOM attestation and returns the SBOM (the SPDX document). */
export async function verifiedSbom(ref: string, publicKey: string, opts: { plainHttp?: boolean; home: string }): Promise<Record<string, unknown>> {
  const r = await verifying(ref, () =>
    cosign(['verify-attestation', '--key', publicKey, '--type', 'spdxjson', '--insecure-ignore-tlog=true', ...registryArgs(!!opts.plainHttp), ref], opts.home),
  );
  // One DSSE envelope per line; its payload is the in-toto statement, whose predicate is the SBOM.
  const envelope = JSON.parse(r.stdout.trim().split('\n')[0]!) as { payload: string };
  const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as { predicate: Record<string, unknown> };
  return statement.predicate;
}
