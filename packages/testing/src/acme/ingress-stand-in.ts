import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  NetworkingV1Api,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  type V1Container,
  type V1Ingress,
  type V1Pod,
  type V1Service,
} from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { containerArgv, localProcess, type LocalImage } from '../e2e/image-command.js';
import { freePort } from '../net/ports.js';
import { guardPid, releasePid } from '../process/watchdog.js';
import { StopWaiting, waitFor } from '../wait.js';

export interface IngressStandInOptions {
  /** The port to serve on (127.0.0.1): where Pebble sends HTTP-01 validations (pebble.httpPort). */
  port: number;
  /**
   * Container images the stand-in can "run": image repository (tag ignored) → the image as a local
   * process runs it (its ENTRYPOINT and CMD, its files on this machine), or the image's server
   * made in this process (see {@link InProcessImage}).
   */
  images: Record<string, LocalImage | InProcessImage>;
  /** Only route Ingresses of this class (spec.ingressClassName or the kubernetes.io/ingress.class annotation). */
  ingressClass?: string;
}

/**
 * An image whose container the stand-in serves from its own process: the container's own server
 * code, made from the container's arguments as the pod gives them. For benchmarks, where a
 * process per pod would cost the machine more than the operators under test (a Node process
 * starting is about 0.1 CPU-s, and 60 challenges at once would be 60 processes).
 */
export interface InProcessImage {
  inProcess(args: string[]): Server;
}

const isInProcess = (image: LocalImage | InProcessImage): image is InProcessImage => 'inProcess' in image;

export interface RoutedRequest {
  host: string;
  path: string;
  userAgent: string;
  /** Sent by the CA (Pebble's validation authority, by User-Agent), not by the cluster's self-check. */
  fromCA: boolean;
  /** `namespace/pod` that answered, if any. */
  pod?: string;
  status: number;
}

export interface IngressStandIn {
  /** Every request served, in order. */
  readonly requests: RoutedRequest[];
  /** Pods whose container runs as a local process now (`namespace/name`). */
  running(): string[];
  /**
   * From now on answer the CA (Pebble's validation requests, by User-Agent) for `host` with
   * `body`, while the cluster's own self-check still reaches the solver: the split view a user
   * gets when the public address of a name points somewhere else than the cluster's ingress.
   */
  answerCAWith(host: string, body: string): void;
  /**
   * From now on answer every request for `host` that is not the CA's with 404, while the CA still
   * reaches the solver: a cluster that cannot reach its own public address (hairpin NAT, split
   * horizon DNS), where the operator's self-check never passes though the CA would validate.
   */
  hideFromCluster(host: string): void;
  stop(): Promise<void>;
}

interface Backend {
  namespace: string;
  service: string;
  port: number | string;
}

/** A pod's container as run here: a local process, or a server in this process. */
interface SolverProcess {
  alive(): boolean;
  stop(): void;
  port: number;
  pod: string;
  ready: Promise<unknown>;
}

const PEBBLE_VA = /^LetsEncrypt-Pebble-VA/;

interface HTTPRouteItem {
  metadata: { namespace: string; deletionTimestamp?: string };
  spec?: {
    hostnames?: string[];
    rules?: { matches?: { path?: { type?: string; value?: string } }[]; backendRefs?: { name: string; port?: number }[] }[];
  };
}

/** Where routing reads the cluster: the watches, or the API server itself. */
interface View {
  ingresses(): Promise<readonly V1Ingress[]>;
  service(namespace: string, name: string): Promise<V1Service | undefined>;
  pods(namespace: string): Promise<readonly V1Pod[]>;
  httpRoutes(): Promise<HTTPRouteItem[]>;
}

/** A watch of one kind in every namespace, started (its first list in) and kept running. */
async function watched<T extends KubernetesObject>(kubeConfig: KubeConfig, path: string, list: ListPromise<T>) {
  const informer = makeInformer(kubeConfig, path, list);
  let stopped = false;
  // The client's watch ends on an error and must be started again.
  const restart = () => {
    if (!stopped) informer.start().catch(() => undefined);
  };
  informer.on('error', () => setTimeout(restart, 500).unref());
  await informer.start();
  return {
    list: (namespace?: string) => informer.list(namespace),
    get: (name: string, namespace: string) => informer.get(name, namespace),
    async stop() {
      stopped = true;
      await informer.stop();
    },
  };
}

/** Does an Ingress path (type, value) match a request path? (networking.k8s.io/v1 semantics.) */
function pathMatches(type: string | undefined, value: string | undefined, path: string): number {
  const v = value ?? '/';
  if (type === 'Exact') return v === path ? 10_000 + v.length : -1;
  // Prefix and ImplementationSpecific: element-wise prefix. Longer prefixes win.
  const trimmed = v.replace(/\/+$/, '');
  return trimmed === '' || path === trimmed || path.startsWith(`${trimmed}/`) ? trimmed.length : -1;
}

function hostMatches(ruleHost: string | undefined, host: string): boolean {
  if (!ruleHost) return true;
  if (ruleHost.startsWith('*.')) return host.endsWith(ruleHost.slice(1)) && !host.slice(0, -ruleHost.length + 1).includes('.');
  return ruleHost === host;
}

const selectorMatches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/**
 * Stands in for an ingress controller (and a Gateway) in front of a simulated cluster whose pods
 * do not really run: it routes each HTTP request by Host and path through the Ingresses and
 * HTTPRoutes in the cluster to a Service, picks a Running pod behind it, and runs that pod's
 * container as a local process (its image mapped to one of this repository's entrypoints, its
 * args exactly as the pod spec gives them, the listen port rewritten to a free one), or, for an
 * {@link InProcessImage}, as a server in this process. So the pod
 * spec, Service and route an operator creates, and the container's own code, are all exercised.
 * Processes end when their pods go away.
 */
export async function startIngressStandIn(kubeConfig: KubeConfig, options: IngressStandInOptions): Promise<IngressStandIn> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const networking = kubeConfig.makeApiClient(NetworkingV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const processes = new Map<string, SolverProcess>();
  const starting = new Map<string, Promise<SolverProcess>>();
  const requests: RoutedRequest[] = [];
  const caViews = new Map<string, string>();
  const hidden = new Set<string>();

  // What routing reads, from a watch of each kind: a list per request would make the stand-in
  // the API server's biggest client (at 60 challenges at once, each self-check and validation
  // listing every Ingress and Pod). A miss is read again from the API server before it is
  // answered, so an object made a moment ago is never reported missing.
  const caches = {
    ingresses: await watched(kubeConfig, '/apis/networking.k8s.io/v1/ingresses', () => networking.listIngressForAllNamespaces()),
    services: await watched(kubeConfig, '/api/v1/services', () => core.listServiceForAllNamespaces()),
    pods: await watched(kubeConfig, '/api/v1/pods', () => core.listPodForAllNamespaces()),
  };
  const cached: View = {
    ingresses: async () => caches.ingresses.list(),
    service: async (namespace, name) => caches.services.get(name, namespace),
    pods: async (namespace) => caches.pods.list(namespace),
    httpRoutes: () => httpRoutes(false),
  };
  const fresh: View = {
    ingresses: async () => (await networking.listIngressForAllNamespaces()).items,
    service: (namespace, name) => core.readNamespacedService({ namespace, name }).catch(() => undefined),
    pods: async (namespace) => (await core.listNamespacedPod({ namespace })).items,
    httpRoutes: () => httpRoutes(true),
  };

  // HTTPRoutes are listed per request, and only while the Gateway API is installed (checked
  // again at most every 5 s while it is not).
  let gatewayApi: { installed: boolean; checkedAt: number } = { installed: false, checkedAt: -Infinity };
  async function httpRoutes(force: boolean): Promise<HTTPRouteItem[]> {
    if (!force && !gatewayApi.installed && performance.now() - gatewayApi.checkedAt < 5_000) return [];
    try {
      const routes = (await custom.listClusterCustomObject({ group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes' })) as {
        items: HTTPRouteItem[];
      };
      gatewayApi = { installed: true, checkedAt: performance.now() };
      return routes.items;
    } catch {
      gatewayApi = { installed: false, checkedAt: performance.now() };
      return []; // Gateway API not installed
    }
  }

  async function route(view: View, host: string, path: string): Promise<Backend | undefined> {
    let best: { score: number; backend: Backend } | undefined;
    const consider = (score: number, backend: Backend) => {
      if (score >= 0 && (!best || score > best.score)) best = { score, backend };
    };
    for (const ing of await view.ingresses()) {
      if (ing.metadata?.deletionTimestamp) continue;
      const cls = ing.spec?.ingressClassName ?? ing.metadata?.annotations?.['kubernetes.io/ingress.class'];
      if (options.ingressClass && cls !== options.ingressClass) continue;
      for (const rule of ing.spec?.rules ?? []) {
        if (!hostMatches(rule.host, host)) continue;
        for (const p of rule.http?.paths ?? []) {
          const svc = p.backend.service;
          if (svc)
            consider(pathMatches(p.pathType, p.path, path) + (rule.host ? 0.5 : 0), {
              namespace: ing.metadata!.namespace!,
              service: svc.name,
              port: svc.port?.number ?? svc.port?.name ?? 80,
            });
        }
      }
    }
    for (const r of await view.httpRoutes()) {
      if (r.metadata.deletionTimestamp) continue;
      const hostnames = r.spec?.hostnames ?? [];
      if (hostnames.length && !hostnames.some((h) => hostMatches(h, host))) continue;
      for (const rule of r.spec?.rules ?? []) {
        const ref = rule.backendRefs?.[0];
        if (!ref) continue;
        for (const m of rule.matches?.length ? rule.matches : [{}]) {
          const type = m.path?.type === 'PathPrefix' ? 'Prefix' : (m.path?.type ?? 'Prefix');
          consider(pathMatches(type, m.path?.value, path), { namespace: r.metadata.namespace, service: ref.name, port: ref.port ?? 80 });
        }
      }
    }
    return best?.backend;
  }

  /** A Running pod behind the Service, and the container port the Service port targets. */
  async function endpoint(view: View, b: Backend): Promise<{ pod: V1Pod; containerPort: number } | undefined> {
    const svc = await view.service(b.namespace, b.service);
    const sp = svc?.spec?.ports?.find((p) => p.port === b.port || p.name === b.port);
    if (!sp) return undefined;
    const pods = (await view.pods(b.namespace)).filter(
      (p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running' && selectorMatches(svc!.spec?.selector, p.metadata?.labels),
    );
    for (const pod of pods) {
      const target = sp.targetPort ?? sp.port;
      for (const c of pod.spec?.containers ?? []) {
        const port = c.ports?.find((p) => p.containerPort === target || p.name === target);
        if (port) return { pod, containerPort: port.containerPort };
      }
    }
    return undefined;
  }

  /** The route and its endpoint as `view` shows them. */
  async function lookup(view: View, host: string, path: string): Promise<{ backend?: Backend; ep?: { pod: V1Pod; containerPort: number } }> {
    const backend = await route(view, host, path);
    return { backend, ep: backend && (await endpoint(view, backend)) };
  }

  /** The route and endpoint from the watches, or, when they find none, from the API server. */
  async function resolve(host: string, path: string) {
    const fromWatches = await lookup(cached, host, path);
    return fromWatches.ep ? fromWatches : lookup(fresh, host, path);
  }

  function imageFor(image: string): LocalImage | InProcessImage | undefined {
    const repo = image.replace(/@sha256:.*$/, '').replace(/:[^/:]+$/, '');
    return options.images[repo];
  }

  async function processFor(pod: V1Pod, containerPort: number): Promise<SolverProcess> {
    const uid = pod.metadata!.uid!;
    const existing = processes.get(uid);
    if (existing?.alive()) return existing;
    const container = pod.spec!.containers.find((c) => c.ports?.some((p) => p.containerPort === containerPort))!;
    const image = imageFor(container.image ?? '');
    if (!image) throw new Error(`no local image for ${container.image} (known: ${Object.keys(options.images).join(', ')})`);
    const podName = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    // One start per pod: the CA's request and the cluster's self-check often arrive together.
    let start = starting.get(uid);
    if (!start) {
      start = (async () => {
        try {
          const proc = isInProcess(image) ? await serveInProcess(image, container.args ?? [], podName) : await spawnLocal(image, container, podName);
          processes.set(uid, proc);
          return proc;
        } finally {
          starting.delete(uid);
        }
      })();
      starting.set(uid, start);
    }
    return start;
  }

  /** The container's server made here from its args, on a free port of its own. */
  async function serveInProcess(image: InProcessImage, args: string[], podName: string): Promise<SolverProcess> {
    const server = image.inProcess(args);
    let open = true;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return {
      alive: () => open,
      stop() {
        open = false;
        server.closeAllConnections();
        server.close();
      },
      port: (server.address() as AddressInfo).port,
      pod: podName,
      ready: Promise.resolve(),
    };
  }

  async function spawnLocal(image: LocalImage, container: V1Container, podName: string): Promise<SolverProcess> {
    const port = await freePort();
    // What the container runtime would run (image ENTRYPOINT/CMD, pod command/args), with the
    // listen port moved to a free one.
    const argv = containerArgv(container, image);
    const listenPort = /^--listen-port=/;
    const rewritten = argv.some((a) => listenPort.test(a))
      ? argv.map((a) => (listenPort.test(a) ? `--listen-port=${port}` : a))
      : [...argv, `--listen-port=${port}`];
    const { file, args } = localProcess(rewritten, image);
    const env = Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
    const child: ChildProcess = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, ...image.env, ...env } });
    if (child.pid) guardPid(child.pid);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.on('exit', () => child.pid && releasePid(child.pid));
    const ready = waitFor(
      `the container of pod ${podName} to listen`,
      async () => {
        if (child.exitCode !== null) throw new StopWaiting(`${podName} exited with ${child.exitCode}: ${stderr}`);
        return (await forward('127.0.0.1', port, '/healthz', 'localhost', '').catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    return { alive: () => child.exitCode === null, stop: () => child.kill('SIGTERM'), port, pod: podName, ready };
  }

  /** Ends the processes of pods that are gone or going. */
  function sweep() {
    if (!processes.size) return;
    const alive = new Set(
      caches.pods
        .list()
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => p.metadata!.uid!),
    );
    for (const [uid, p] of processes) {
      if (!alive.has(uid) || !p.alive()) {
        p.stop();
        processes.delete(uid);
      }
    }
  }
  const sweeper = setInterval(sweep, 1_000);
  sweeper.unref();

  function forward(
    hostAddr: string,
    port: number,
    path: string,
    host: string,
    userAgent: string,
  ): Promise<{ status: number; body: string; headers: Record<string, string> }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: hostAddr, port, path, method: 'GET', headers: { host, 'user-agent': userAgent }, agent: false, timeout: 5_000 },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: { 'content-type': res.headers['content-type'] ?? 'text/plain' } }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end();
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const userAgent = req.headers['user-agent'] ?? '';
    const fromCA = PEBBLE_VA.test(userAgent);
    const record: RoutedRequest = { host, path, userAgent, fromCA, status: 0 };
    requests.push(record);
    const reply = (status: number, body: string, headers: Record<string, string> = { 'content-type': 'text/plain' }) => {
      record.status = status;
      res.writeHead(status, headers).end(body);
    };
    try {
      const diverted = caViews.get(host);
      if (diverted !== undefined && fromCA) return reply(200, diverted);
      if (hidden.has(host) && !fromCA) return reply(404, 'not reachable from inside the cluster\n');
      sweep();
      const { backend, ep } = await resolve(host, path);
      if (!backend) return reply(404, 'default backend - 404\n');
      if (!ep) return reply(503, `no ready endpoints for service ${backend.namespace}/${backend.service}\n`);
      const proc = await processFor(ep.pod, ep.containerPort);
      await proc.ready;
      record.pod = proc.pod;
      const answer = await forward('127.0.0.1', proc.port, req.url ?? '/', req.headers.host ?? host, userAgent);
      return reply(answer.status, answer.body, answer.headers);
    } catch (err) {
      return reply(502, `stand-in ingress: ${(err as Error).message}\n`);
    }
  }

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });

  return {
    requests,
    running: () => [...processes.values()].filter((p) => p.alive()).map((p) => p.pod),
    hideFromCluster(host) {
      hidden.add(host);
    },
    answerCAWith(host, body) {
      caViews.set(host, body);
    },
    async stop() {
      clearInterval(sweeper);
      await Promise.all(Object.values(caches).map((c) => c.stop()));
      await Promise.allSettled(starting.values());
      for (const p of processes.values()) p.stop();
      processes.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
