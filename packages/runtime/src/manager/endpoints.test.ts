import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from './http-server.js';
import { serveMetrics } from './endpoints.js';

describe('/debug/queue', () => {
  let server: RunningServer | undefined;
  afterEach(() => server?.close());
  const serve = async (openDebugQueue?: boolean) => {
    server = await serveMetrics('127.0.0.1:0', {
      render: async () => '',
      contentType: 'text/plain',
      debugQueue: () => ({ controllers: [{ queued: [{ key: 'shop/secret-thing' }] }] }),
      openDebugQueue,
    });
    return (path: string) => fetch(`http://127.0.0.1:${server!.port}${path}`).then(async (r) => ({ status: r.status, body: await r.text() }));
  };

  it('is not served over plain HTTP unless explicitly opened: it names objects and quotes their errors', async () => {
    const get = await serve();
    const closed = await get('/debug/queue');
    expect(closed.status).toBe(403);
    expect(closed.body).toMatch(/--metrics-secure/);
    expect(closed.body).not.toMatch(/secret-thing/);
    expect((await get('/metrics')).status).toBe(200);
  });

  it('is served to anyone once opened with --insecure-debug-queue', async () => {
    const get = await serve(true);
    const open = await get('/debug/queue');
    expect(open.status).toBe(200);
    expect(open.body).toMatch(/secret-thing/);
  });
});
