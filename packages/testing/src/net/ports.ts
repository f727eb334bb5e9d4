import { createServer } from 'node:net';

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
