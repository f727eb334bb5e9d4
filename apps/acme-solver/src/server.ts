import express, { type Express } from 'express';

export interface SolverOptions {
  domain: string;
  token: string;
  key: string;
}

const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

/** The host a request was sent to, without its port (IPv6 brackets kept off). */
const hostOf = (header: string | undefined) =>
  (header ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1');

/**
 * The HTTP-01 responder: `/.well-known/acme-challenge/<token>` for its domain answers the key
 * authorization; `/` and `/healthz` answer 200 (probes); anything else is a 404, so a misrouted
 * request can never be mistaken for a pass.
 */
export function createSolverApp(o: SolverOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get(['/', '/healthz'], (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get(`${CHALLENGE_PREFIX}:token`, (req, res) => {
    if (hostOf(req.headers.host) !== o.domain.toLowerCase() || req.params.token !== o.token) {
      res.status(404).type('text/plain').send('not found');
      return;
    }
    res.set('Cache-Control', 'no-cache, no-store, must-revalidate').type('text/plain').send(o.key);
  });
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('not found');
  });
  return app;
}
