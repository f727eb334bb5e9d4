import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { findBinary } from '../assets/binaries.js';
import { freePort } from '../net/ports.js';
import { httpGet } from '../net/probe.js';
import { ManagedProcess } from '../process/managed-process.js';
import { guardDir, releaseDir } from '../process/watchdog.js';
import { StopWaiting, waitFor } from '../wait.js';

/** A single-member etcd on loopback, data in memory-backed storage where available. */
export class Etcd {
  private proc?: ManagedProcess;
  private dataDir?: string;
  clientUrl = '';

  constructor(private readonly workDir: string) {}

  async start(timeoutMs: number): Promise<void> {
    // /dev/shm keeps etcd's many small writes off the disk; tests need speed, not durability.
    const base = existsSync('/dev/shm') ? '/dev/shm' : this.workDir;
    this.dataDir = mkdtempSync(join(base, 'opkit-etcd-'));
    guardDir(this.dataDir);
    const clientPort = await freePort();
    const peerPort = await freePort();
    this.clientUrl = `http://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    this.proc = new ManagedProcess({
      name: 'etcd',
      command: findBinary('etcd'),
      args: [
        `--data-dir=${this.dataDir}`,
        `--listen-client-urls=${this.clientUrl}`,
        `--advertise-client-urls=${this.clientUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      logFile: join(this.workDir, 'etcd.log'),
    });
    this.proc.start();
    await waitFor(
      'etcd to report healthy',
      async () => {
        if (!this.proc?.running) throw new StopWaiting(`etcd exited (${this.proc?.exitCode}):\n${this.proc?.recentOutput()}`);
        const r = await httpGet(`${this.clientUrl}/health`);
        return r.status === 200 && r.body.includes('true');
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** Compacts history up to the current revision, so watches from older resourceVersions get 410 Gone. */
  async compact(): Promise<number> {
    const head = await this.call<{ header: { revision: string } }>('/v3/kv/range', { key: Buffer.from('\0').toString('base64'), limit: 1 });
    const revision = Number(head.header.revision);
    await this.call('/v3/kv/compaction', { revision: String(revision), physical: true });
    return revision;
  }

  /** Deletes a key behind the apiserver's back (e.g. `/registry/configmaps/ns/name`). */
  async deleteKey(key: string): Promise<number> {
    const r = await this.call<{ deleted?: string }>('/v3/kv/deleterange', { key: Buffer.from(key).toString('base64') });
    return Number(r.deleted ?? 0);
  }

  /** Keys under a prefix, for debugging and for tests that inspect storage. */
  async keys(prefix: string): Promise<string[]> {
    const start = Buffer.from(prefix);
    const end = Buffer.from(prefix);
    // The range's end: the prefix with its last byte one higher.
    end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
    const r = await this.call<{ kvs?: { key: string }[] }>('/v3/kv/range', {
      key: start.toString('base64'),
      range_end: end.toString('base64'),
      keys_only: true,
    });
    return (r.kvs ?? []).map((kv) => Buffer.from(kv.key, 'base64').toString());
  }

  private call<T = unknown>(path: string, body: object): Promise<T> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.clientUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(data) as T) : reject(new Error(`etcd ${path}: ${res.statusCode} ${data}`))));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }

  get process(): ManagedProcess | undefined {
    return this.proc;
  }

  async stop(): Promise<void> {
    await this.proc?.stop(5_000);
    if (this.dataDir) {
      rmSync(this.dataDir, { recursive: true, force: true });
      releaseDir(this.dataDir);
    }
  }
}
