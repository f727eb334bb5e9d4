import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, freePort } from '@opkit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quote, renderNginxConfig, type NginxConfigInput } from './render.js';

const balancer: NginxConfigInput = {
  namespace: 'cdn',
  name: 'balancer',
  role: 'balancer',
  routes: [
    { name: 'cache-live', pathCondition: '^/live/', address: '10.96.0.11:80', maxConns: 1024 },
    { name: 'cache-vod', pathCondition: '^/vod/', address: '10.96.0.12:80', maxConns: 512 },
  ],
};

describe('renderNginxConfig', () => {
  it('routes each pathCondition to its source, in spec order, and 404s the rest without a default source', () => {
    const conf = renderNginxConfig(balancer);
    expect(conf).toContain('upstream src_cache_live {\n    server 10.96.0.11:80 max_conns=1024;');
    expect(conf.indexOf('location ~ "^/live/"')).toBeLessThan(conf.indexOf('location ~ "^/vod/"'));
    expect(conf).toMatch(/location ~ "\^\/vod\/" \{\n\s+proxy_pass http:\/\/src_cache_vod;/);
    expect(conf).toMatch(/location \/ \{\n\s+return 404/);
    expect(conf).not.toContain('proxy_cache ');
  });

  it('sends the source without a pathCondition to location /', () => {
    const conf = renderNginxConfig({ ...balancer, routes: [...balancer.routes, { name: 'web', address: '10.96.0.13:80', maxConns: 512 }] });
    expect(conf).toMatch(/location \/ \{\n\s+proxy_pass http:\/\/src_web;/);
  });

  it('keeps serving other routes when a source is missing: its location answers 503', () => {
    const conf = renderNginxConfig({ ...balancer, routes: [balancer.routes[0]!, { name: 'cache-vod', pathCondition: '^/vod/' }] });
    expect(conf).toMatch(/location ~ "\^\/vod\/" \{\n\s+return 503 "source cache-vod is unavailable\\n";/);
    expect(conf).not.toContain('src_cache_vod');
    expect(conf).toContain('proxy_pass http://src_cache_live;');
  });

  it('puts a cache in front of its origin, resolving its host name per request, with its host and TLS name', () => {
    const conf = renderNginxConfig({
      namespace: 'cdn',
      name: 'cache-live',
      role: 'cache',
      resolver: '10.96.0.10',
      routes: [{ name: 'origin', address: 'https://media.example.com/live' }],
    });
    expect(conf).toContain('proxy_cache_path /tmp/cache');
    expect(conf).toContain('proxy_cache cdn_cache;');
    expect(conf).toContain('resolver 10.96.0.10 valid=30s ipv6=off;');
    expect(conf).not.toContain('upstream origin');
    expect(conf).toMatch(
      /location \/ \{\n\s+set \$origin_host_port "media.example.com:443";\n\s+proxy_pass https:\/\/\$origin_host_port\/live\$request_uri;\n\s+proxy_set_header Host "media.example.com";\n\s+proxy_ssl_server_name on;/,
    );
  });

  it('keeps an origin given by IP address in an upstream with keepalive, and needs no resolver for it', () => {
    const conf = renderNginxConfig({ namespace: 'cdn', name: 'c', role: 'cache', routes: [{ name: 'origin', address: 'http://10.1.2.3:8080/media/' }] });
    expect(conf).toContain('upstream origin {\n    server 10.1.2.3:8080;\n    keepalive 16;');
    expect(conf).toMatch(/proxy_pass http:\/\/origin\/media\/;/);
    expect(conf).not.toContain('resolver');
  });

  it('refuses an origin named by host without a resolver', () => {
    expect(() => renderNginxConfig({ namespace: 'cdn', name: 'c', role: 'cache', routes: [{ name: 'origin', address: 'http://origin.example.com' }] })).toThrow(
      /needs a resolver/,
    );
  });

  it('quotes regular expressions so nginx reads them back unchanged', () => {
    expect(quote('^/a"b\\d+$')).toBe('"^/a\\"b\\\\d+$"');
    expect(renderNginxConfig({ ...balancer, routes: [{ name: 'x', pathCondition: '^/(img|css)/.*\\.(png|css)$', address: '10.0.0.1:80' }] })).toContain(
      'location ~ "^/(img|css)/.*\\\\.(png|css)$" {',
    );
  });
});

// Debian's nginx checks the syntax, and serves the rendered routes for real. .ci/run installs it.
const nginx = spawnSync('nginx', ['-v']).error ? undefined : 'nginx';
const describeNginx = nginx ? describe : describe.skip;
if (!nginx) console.warn('nginx is not installed (apt-get install nginx-light): skipping the nginx -t and live routing checks');

describeNginx('the rendered configuration in a real nginx', () => {
  let dir: string;
  const backends: Server[] = [];
  const listen = (name: string) =>
    new Promise<number>((resolve) => {
      const s = createServer((req, res) => res.end(`${name} ${req.url}`)).listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port));
      backends.push(s);
    });
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'opkit-nginx-'));
    // Run as root (CI), nginx's workers drop to `nobody`, who must reach the cache under here.
    chmodSync(dir, 0o755);
  });
  afterAll(() => {
    for (const s of backends) s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const check = (input: NginxConfigInput) => {
    const file = join(dir, `${input.name}.conf`);
    writeFileSync(file, renderNginxConfig({ ...input, tmpDir: dir }));
    // stdout to /dev/null: the config logs to /dev/stdout, which nginx cannot open on the socket a
    // Node child gets by default (in a pod, stdout is a pipe and it can).
    return spawnSync('nginx', ['-t', '-q', '-p', dir, '-c', file], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  };

  /** nginx serving the rendered configuration; `get` retries while it starts, and fails if it exits. */
  const serve = (name: string, input: NginxConfigInput & { port: number }) => {
    const file = join(dir, `${name}.conf`);
    writeFileSync(file, renderNginxConfig({ ...input, tmpDir: dir }));
    const proc = spawn('nginx', ['-p', dir, '-c', file, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const get = async (path: string) => {
      for (let i = 0; ; i++) {
        try {
          const r = await fetch(`http://127.0.0.1:${input.port}${path}`);
          return `${r.status} ${await r.text()}`;
        } catch (e) {
          if (i > 50 || proc.exitCode !== null)
            throw new Error(`nginx is not serving (${proc.exitCode === null ? (e as Error).message : `exited: ${stderr}`})`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    return { get, stderr: () => stderr, stop: () => proc.kill('SIGQUIT') };
  };

  it.each([
    ['balancer', balancer],
    ['balancer with a missing source', { ...balancer, routes: [balancer.routes[0]!, { name: 'cache-vod', pathCondition: '^/vod/' }] }],
    [
      'cache with sources and a default',
      { ...balancer, name: 'edge', role: 'cache' as const, routes: [...balancer.routes, { name: 'origin', address: 'http://127.0.0.1:9/' }] },
    ],
    [
      'cache in front of an https origin',
      { namespace: 'cdn', name: 'c', role: 'cache' as const, routes: [{ name: 'origin', address: 'https://127.0.0.1:8443/media' }] },
    ],
  ])('nginx -t accepts the %s', (_label, input) => {
    const r = check(input);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('nginx -t rejects a pathCondition PCRE cannot compile (the operator must catch it first)', () => {
    const r = check({ ...balancer, routes: [{ name: 'x', pathCondition: '^/(unclosed', address: '127.0.0.1:80' }] });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/pcre.*compile|missing \)/i);
  });

  it('routes requests by path to the right source', async () => {
    const live = await listen('live');
    const vod = await listen('vod');
    const web = await listen('web');
    const port = await listen('probe').then((p) => p + 1000);
    const { get, stop } = serve('serve', {
      ...balancer,
      port,
      routes: [
        { name: 'cache-live', pathCondition: '^/live/', address: `127.0.0.1:${live}`, maxConns: 16 },
        { name: 'cache-vod', pathCondition: '^/vod/', address: `127.0.0.1:${vod}`, maxConns: 16 },
        { name: 'gone', pathCondition: '^/old/' },
        { name: 'web', address: `127.0.0.1:${web}`, maxConns: 16 },
      ],
    });
    try {
      expect(await get('/live/stream.m3u8')).toBe('200 live /live/stream.m3u8');
      expect(await get('/vod/movie.mp4')).toBe('200 vod /vod/movie.mp4');
      expect(await get('/index.html')).toBe('200 web /index.html');
      expect(await get('/old/thing')).toBe('503 source gone is unavailable\n');
      expect(await get('/healthz')).toBe('200 ok\n');
    } finally {
      stop();
    }
  });

  // A tenant's pathCondition written to break out of its quotes and add a location of its own, and
  // one that backtracks exponentially: each stays one regex location of the tenant's own nginx.
  it('keeps a hostile pathCondition inside its location: no injected directives; a backtracking one is cut short by PCRE', async () => {
    const web = await listen('web');
    const other = await listen('other');
    const port = await freePort();
    const injection = 'x" { } location / { return 200 "pwned"; } location ~ "y';
    const { get, stop } = serve('hostile', {
      ...balancer,
      port,
      routes: [
        { name: 'inject', pathCondition: injection, address: `127.0.0.1:${other}`, maxConns: 16 },
        { name: 'redos', pathCondition: '^/(a+)+$', address: `127.0.0.1:${other}`, maxConns: 16 },
        { name: 'web', address: `127.0.0.1:${web}`, maxConns: 16 },
      ],
    });
    try {
      expect(await get('/index.html')).toBe('200 web /index.html');
      // PCRE's match limit ends the backtracking: nginx answers 500 for that path, at once, and
      // goes on serving the rest. Only the tenant's own balancer sees it.
      const started = performance.now();
      expect((await get(`/${'a'.repeat(40)}!`)).slice(0, 3)).toBe('500');
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(await get('/index.html')).toBe('200 web /index.html');
    } finally {
      stop();
    }
    expect(renderNginxConfig({ ...balancer, routes: [{ name: 'inject', pathCondition: injection, address: '127.0.0.1:1' }] })).not.toMatch(
      /return 200 "pwned"/,
    );
  });

  // Found in real containers: nginx resolved an origin's name once, at start, and refused to start
  // when it did not resolve, so a cache in front of an origin whose DNS was not (yet) there
  // crash-looped, and one whose origin's address changed kept the stale one.
  it('starts a cache whose origin name does not resolve yet, answers 502 for it, and reaches the origin once it resolves', async () => {
    const origin = await listen('origin');
    const [port, dns, mgmt] = [await freePort(), await freePort(), await freePort()];
    const { get, stop, stderr } = serve('origin', {
      namespace: 'cdn',
      name: 'cache',
      role: 'cache',
      port,
      resolver: `127.0.0.1:${dns}`,
      routes: [{ name: 'origin', address: `http://origin.example.test:${origin}/media` }],
    });
    let dnsServer: ReturnType<typeof spawn> | undefined;
    try {
      expect(await get('/healthz')).toBe('200 ok\n');
      const first = await get('/clip.mp4');
      expect(first.slice(0, 3), `${first}\n${stderr()}`).toBe('502');
      // The name now resolves (a DNS server answering every name with 127.0.0.1): no restart needed.
      dnsServer = spawn(
        findBinary('pebble-challtestsrv'),
        [
          '-dnsserver',
          `127.0.0.1:${dns}`,
          '-defaultIPv4',
          '127.0.0.1',
          '-defaultIPv6',
          '',
          '-management',
          `127.0.0.1:${mgmt}`,
          '-http01',
          '',
          '-https01',
          '',
          '-tlsalpn01',
          '',
          '-doh',
          '',
        ],
        { stdio: 'ignore' },
      );
      let last = '';
      for (let i = 0; i < 100 && !last.startsWith('200'); i++) {
        last = await get('/clip.mp4');
        if (!last.startsWith('200')) await new Promise((r) => setTimeout(r, 200));
      }
      expect(last).toBe('200 origin /media/clip.mp4');
    } finally {
      stop();
      dnsServer?.kill();
    }
  });
});
