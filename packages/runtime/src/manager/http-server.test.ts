import { describe, expect, it } from 'vitest';
import { listen } from './http-server.js';

describe("the manager's HTTP server (/metrics, /healthz, /readyz)", () => {
  it('answers GET and HEAD on its routes, with the query; 404 elsewhere; 405 for writes; 500 with the error', async () => {
    const s = await listen(
      {
        '/ok': (url) => ({ status: 200, contentType: 'text/plain', body: `verbose=${url.searchParams.has('verbose')}` }),
        '/boom': () => Promise.reject(new Error('the check threw')),
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      const at = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${s.port}${path}`, init);
      const ok = await at('/ok?verbose');
      expect([ok.status, ok.headers.get('content-type'), await ok.text()]).toEqual([200, 'text/plain', 'verbose=true']);
      const head = await at('/ok', { method: 'HEAD' });
      expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([200, '13', '']);
      expect((await at('/nope')).status).toBe(404);
      const post = await at('/ok', { method: 'POST', body: 'x' });
      expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
      const boom = await at('/boom');
      expect([boom.status, await boom.text()]).toEqual([500, 'the check threw\n']);
    } finally {
      await s.close();
    }
  });
});
