import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';

// Ports handed out by this process; the kernel may give the same ephemeral port twice between
// probing and the child binding it, so never hand one out twice ourselves.
const handedOut = new Set<number>();

/** A loopback port nobody is listening on right now. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
    if (port && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('could not find a free loopback port');
}

/**
 * A UDP socket and a TCP server on one loopback port, as a DNS server listens (queries over UDP,
 * updates and long answers over TCP). Binding UDP to port 0 and then TCP to the same number fails
 * now and then: the kernel hands out UDP ports without looking at TCP, and the number may be the
 * local end of a live TCP connection (any API server's or etcd's client), so `listen` says
 * EADDRINUSE. Such a port is given back and another one tried.
 */
export async function udpAndTcpOnOnePort(
  onConnection: (socket: Socket) => void,
  { tryFirst = 0, attempts = 20 }: { tryFirst?: number; attempts?: number } = {},
): Promise<{ udp: UdpSocket; tcp: Server; port: number }> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    const udp = createSocket('udp4');
    try {
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(i === 0 ? tryFirst : 0, '127.0.0.1', () => resolve());
      });
    } catch (err) {
      udp.close();
      last = err;
      continue;
    }
    const port = udp.address().port;
    const tcp = createServer(onConnection);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => resolve());
      });
      return { udp, tcp, port };
    } catch (err) {
      udp.close();
      last = err;
    }
  }
  throw new Error(`no loopback port free for both UDP and TCP in ${attempts} tries`, { cause: last });
}
