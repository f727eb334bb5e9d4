/** Where one route sends requests. */
export interface Route {
  /** The source cluster's name, or "origin". */
  name: string;
  pathCondition?: string;
  /** `ip:port` of a source's Service, or an `http(s)://` origin URL. Absent: the source is missing. */
  address?: string;
  /** Concurrent connections each balancer pod may open to this source (its capacity). */
  maxConns?: number;
}

export interface NginxConfigInput {
  namespace: string;
  name: string;
  role: 'balancer' | 'cache';
  routes: Route[];
  /** Port nginx listens on inside the pod (unprivileged). */
  port?: number;
  /** Writable directory for pid, temp files and the cache (an emptyDir in the pod). */
  tmpDir?: string;
  /**
   * The DNS server (`ip` or `ip:port`) nginx resolves an origin's host name with, per request: the
   * cluster's DNS. Needed when an origin is named by host rather than by IP address.
   */
  resolver?: string;
}

export const NGINX_PORT = 8080;
/** Each nginx pod serves up to this many connections; a source's capacity is this × its replicas. */
export const CONNECTIONS_PER_REPLICA = 512;

/**
 * A string as an nginx quoted parameter. Inside double quotes nginx unescapes `\"`, `\\`, `\t`,
 * `\r`, `\n` and keeps every other backslash, so regex escapes such as `\d` survive once `\` and
 * `"` are escaped.
 */
export const quote = (s: string): string =>
  `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;

const upstreamName = (name: string) => `src_${name.replace(/[^a-z0-9]/g, '_')}`;

interface OriginParts {
  scheme: 'http' | 'https';
  host: string;
  hostPort: string;
  path: string;
}

export function parseOrigin(url: string): OriginParts {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`origin must be an http(s) URL, not ${u.protocol}`);
  const scheme = u.protocol === 'https:' ? 'https' : 'http';
  const port = u.port || (scheme === 'https' ? '443' : '80');
  return {
    scheme,
    host: u.hostname,
    hostPort: `${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:${port}`,
    path: u.pathname === '/' ? '' : u.pathname,
  };
}

/** An IPv4 or IPv6 address rather than a name (which nginx must resolve). */
const isAddress = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');

/** An origin named by host is resolved per request (see proxyTo), so it has no upstream block. */
const resolvedPerRequest = (route: Route) => route.name === 'origin' && !!route.address && !isAddress(parseOrigin(route.address).host);

function upstreamBlock(route: Route): string[] {
  if (!route.address) return [];
  if (route.name === 'origin') {
    if (resolvedPerRequest(route)) return [];
    const o = parseOrigin(route.address);
    return [`  upstream origin {`, `    server ${o.hostPort};`, `    keepalive 16;`, `  }`];
  }
  const maxConns = route.maxConns ? ` max_conns=${route.maxConns}` : '';
  return [`  upstream ${upstreamName(route.name)} {`, `    server ${route.address}${maxConns};`, `    keepalive 32;`, `  }`];
}

function proxyTo(route: Route): string[] {
  if (!route.address) return [`      return 503 ${quote(`source ${route.name} is unavailable\n`)};`];
  if (route.maxConns === 0) return [`      return 503 ${quote(`source ${route.name} has no replicas\n`)};`];
  if (route.name !== 'origin') return [`      proxy_pass http://${upstreamName(route.name)};`];
  const o = parseOrigin(route.address);
  const tls = o.scheme === 'https' ? [`      proxy_ssl_server_name on;`, `      proxy_ssl_name ${quote(o.host)};`] : [];
  if (resolvedPerRequest(route)) {
    // A name in a variable is resolved when a request needs it (and again once its TTL, at most
    // 30 s, has passed): nginx starts whether or not the name resolves yet, answers 502 while it
    // does not, and follows the origin when its address changes. A static `server` name would be
    // resolved once at start, and nginx would refuse to start without it.
    return [
      `      set $origin_host_port ${quote(o.hostPort)};`,
      `      proxy_pass ${o.scheme}://$origin_host_port${o.path.replace(/\/$/, '')}$request_uri;`,
      `      proxy_set_header Host ${quote(o.host)};`,
      ...tls,
    ];
  }
  return [`      proxy_pass ${o.scheme}://origin${o.path ? `${o.path.replace(/\/?$/, '/')}` : ''};`, `      proxy_set_header Host ${quote(o.host)};`, ...tls];
}

/**
 * The nginx configuration of one CdnCluster.
 * - balancer: one regex location per source with a pathCondition (in spec order: nginx takes the
 *   first regex that matches), the source without one as `location /`;
 * - cache: the same routes behind `proxy_cache`, the origin as the default route when no source is.
 * A missing source keeps its location, answering 503, so the other routes keep serving.
 * Everything writable lives under /tmp: the pods run with a read-only root filesystem.
 */
export function renderNginxConfig(input: NginxConfigInput): string {
  const port = input.port ?? NGINX_PORT;
  const tmp = input.tmpDir ?? '/tmp';
  const conditional = input.routes.filter((r) => r.pathCondition);
  const fallback = input.routes.find((r) => !r.pathCondition);
  const cache = input.role === 'cache';
  const perRequest = input.routes.some(resolvedPerRequest);
  if (perRequest && !input.resolver) throw new Error('an origin named by host needs a resolver (the cluster DNS server) to be resolved per request');
  const lines = [
    `# nginx configuration of CdnCluster ${input.namespace}/${input.name} (${input.role}).`,
    `# Written by cdn-operator from the CdnCluster's spec and its sources; edits are overwritten.`,
    `worker_processes auto;`,
    `pid ${tmp}/nginx.pid;`,
    `error_log stderr warn;`,
    ``,
    `events {`,
    `  worker_connections 1024;`,
    `}`,
    ``,
    `http {`,
    `  log_format cdn '$remote_addr "$request" $status $body_bytes_sent $request_time upstream=$upstream_addr${cache ? ' cache=$upstream_cache_status' : ''}';`,
    `  access_log /dev/stdout cdn;`,
    `  server_tokens off;`,
    `  client_body_temp_path ${tmp}/client_body;`,
    `  proxy_temp_path ${tmp}/proxy_temp;`,
    `  fastcgi_temp_path ${tmp}/fastcgi_temp;`,
    `  uwsgi_temp_path ${tmp}/uwsgi_temp;`,
    `  scgi_temp_path ${tmp}/scgi_temp;`,
    `  proxy_http_version 1.1;`,
    `  proxy_set_header Connection "";`,
    `  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;`,
    `  proxy_connect_timeout 5s;`,
    `  proxy_next_upstream error timeout http_502 http_503;`,
    ...(perRequest ? [`  resolver ${input.resolver} valid=30s ipv6=off;`, `  resolver_timeout 5s;`] : []),
    ...(cache
      ? [
          `  proxy_cache_path ${tmp}/cache levels=1:2 keys_zone=cdn_cache:16m max_size=512m inactive=60m use_temp_path=off;`,
          `  proxy_cache_key $scheme$host$request_uri;`,
        ]
      : []),
    ``,
    ...input.routes.flatMap(upstreamBlock),
    ``,
    `  server {`,
    `    listen ${port};`,
    `    proxy_set_header Host $host;`,
    ...(cache
      ? [
          `    proxy_cache cdn_cache;`,
          `    proxy_cache_valid 200 301 302 10m;`,
          `    proxy_cache_valid 404 1m;`,
          `    proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504;`,
          `    proxy_cache_lock on;`,
          `    add_header X-Cache-Status $upstream_cache_status always;`,
        ]
      : []),
    ``,
    `    location = /healthz {`,
    `      access_log off;`,
    `      return 200 "ok\\n";`,
    `    }`,
    ...conditional.flatMap((r) => [``, `    location ~ ${quote(r.pathCondition!)} {`, ...proxyTo(r), `    }`]),
    ``,
    `    location / {`,
    ...(fallback ? proxyTo(fallback) : [`      return 404 "no route for this path\\n";`]),
    `    }`,
    `  }`,
    `}`,
    ``,
  ];
  return lines.join('\n');
}
