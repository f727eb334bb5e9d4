import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { KeyPair } from './self-signed.js';

/**
 * A serving certificate kept by someone else in a directory (`tls.crt`, `tls.key`): OLM mounts one
 * into operators whose bundle declares webhooks, cert-manager users mount a Secret. Read at start
 * and every 10 s after (a mounted Secret changes by an atomic symlink swap, which file watchers
 * miss); a pair that does not load keeps the previous one and is reported on /readyz.
 */
export class CertificateFiles {
  private timer?: NodeJS.Timeout;
  private last?: string;
  problem?: string;

  constructor(
    private readonly dir: string,
    private readonly onChange: (pair: KeyPair) => void,
    private readonly log: Logger,
    private readonly intervalMs = 10_000,
  ) {}

  async start(): Promise<void> {
    await this.load();
    this.timer = setInterval(() => void this.load(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async load() {
    try {
      const [cert, key] = await Promise.all([readFile(join(this.dir, 'tls.crt'), 'utf8'), readFile(join(this.dir, 'tls.key'), 'utf8')]);
      const id = cert + key;
      this.problem = undefined;
      if (id === this.last) return;
      this.onChange({ cert, key });
      this.last = id;
    } catch (err) {
      this.problem = `webhook certificate in ${this.dir}: ${(err as Error).message}`;
      this.log.warn({ err: (err as Error).message, dir: this.dir }, 'cannot read the webhook certificate; serving the previous one');
    }
  }
}
