import { connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { udpAndTcpOnOnePort } from './ports.js';

describe('udpAndTcpOnOnePort', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => cleanup.splice(0).forEach((f) => f()));

  /** A port that is free for UDP but is the local end of a live TCP connection. */
  async function portHeldByAConnection(): Promise<number> {
    const srv = createServer((c) => c.on('error', () => {}));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const client: Socket = connect((srv.address() as { port: number }).port, '127.0.0.1');
    await new Promise((r) => client.once('connect', r));
    cleanup.push(() => {
      client.destroy();
      srv.close();
    });
    return client.localPort!;
  }

  it('moves on from a port whose number a TCP connection holds (the kernel hands it out for UDP all the same)', async () => {
    const taken = await portHeldByAConnection();
    const { udp, tcp, port } = await udpAndTcpOnOnePort(() => {}, { tryFirst: taken });
    cleanup.push(() => {
      udp.close();
      tcp.close();
    });
    expect(port).not.toBe(taken);
    expect(udp.address().port).toBe(port);
    expect((tcp.address() as { port: number }).port).toBe(port);
  });

  it('says why when no port will do', async () => {
    const taken = await portHeldByAConnection();
    const err = await udpAndTcpOnOnePort(() => {}, { tryFirst: taken, attempts: 1 }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/no loopback port free for both UDP and TCP in 1 tries/);
    expect(((err as Error).cause as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
  });
});
