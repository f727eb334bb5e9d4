import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { runLong } from './progress.js';
import { dockerConfigEnv } from './sign.js';

/**
 * The SBOM of an image in a registry (SPDX 2.3 JSON), by syft (built here from its Go module),
 * read from the registry by digest, so it describes exactly what was pushed: the Debian packages
 * of the base (dpkg status), Node (its binary), and the npm packages bundled into main.js.
 */
export async function imageSbom(ref: string, outFile: string, opts: { plainHttp?: boolean; home: string }): Promise<string> {
  if (!ref.includes('@sha256:')) throw new Error(`${ref}: describe an image by digest, not by tag`);
  mkdirSync(opts.home, { recursive: true });
  // +sbom-cataloger: the SBOM files the image ships (the bundle's, tools/build/sbom.mjs) are read
  // and their packages merged in; syft leaves that cataloger off unless asked.
  await runLong(findBinary('syft'), ['scan', `registry:${ref}`, '--select-catalogers', '+sbom-cataloger', '--output', `spdx-json=${outFile}`, '--quiet'], {
    label: `writing the SBOM of ${ref}`,
    timeoutMs: 10 * 60_000,
    env: {
      ...process.env,
      ...dockerConfigEnv(),
      HOME: opts.home,
      XDG_CACHE_HOME: join(opts.home, 'cache'),
      SYFT_CHECK_FOR_APP_UPDATE: 'false',
      ...(opts.plainHttp ? { SYFT_REGISTRY_INSECURE_USE_HTTP: 'true' } : {}),
    },
  });
  return outFile;
}
