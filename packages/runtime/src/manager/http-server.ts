import express, { type Express } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** `:8080`, `0.0.0.0:8080`, `127.0.0.1:0` (any free port); `0` or empty disables the server. */
export function parseBindAddress(addr: string | undefined): { host: string; port: number } | undefined {
  if (!addr || addr === '0') return undefined;
  const i = addr.lastIndexOf(':');
  const host = i > 0 ? addr.slice(0, i).replace(/^\[|\]$/g, '') : '0.0.0.0';
  const port = Number(i >= 0 ? addr.slice(i + 1) : addr);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid bind address "${addr}": expected [host]:port`);
  return { host, port };
}

export interface RunningServer {
  server: Server;
  /** The port actually bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

export function newApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  return app;
}

export async function listen(app: Express, addr: { host: string; port: number }): Promise<RunningServer> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(addr.port, addr.host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.on('error', reject);
  });
  // Scrapes and probes are short; don't let a slow client hold the process at shutdown.
  server.keepAliveTimeout = 5_000;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
