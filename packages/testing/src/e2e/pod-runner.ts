import { CoreV1Api, type KubeConfig, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../net/ports.js';
import { containerArgv, localProcess, type LocalImage } from './image-command.js';
import { guardPid, releasePid } from '../process/watchdog.js';

export interface PodRunnerOptions {
  /** Image repository (tag ignored) → what to run for it. Pods of other images are left alone. */
  images: Record<string, LocalImage>;
  /** A kubeconfig for a ServiceAccount: the identity a pod's process gets (a TokenRequest). */
  credentials(namespace: string, serviceAccount: string): Promise<string>;
  /** Where each process's output goes (`<namespace>_<pod>.log`). */
  logDir: string;
  /** How often the pod list is read. Default 500 ms. */
  intervalMs?: number;
}

export interface RunningPod {
  namespace: string;
  name: string;
  uid: string;
  pid?: number;
  /** containerPort → the local port it listens on. */
  ports: Record<number, number>;
  restarts: number;
  logFile: string;
  /** The readiness probe passes (or there is none) and the process is up. */
  ready: boolean;
}

export interface PodRunner {
  pods(): RunningPod[];
  /** The last lines a pod's process wrote. */
  logs(namespace: string, name: string, lines?: number): string;
  /** SIGKILL to a pod's process, which is not restarted: its node is gone (the pod object stays until deleted). */
  kill(namespace: string, name: string): void;
  stop(): Promise<void>;
}

interface Entry extends RunningPod {
  child?: ChildProcess;
  log: WriteStream;
  stopping: boolean;
  restartAt?: number;
  pod: V1Pod;
  container: V1Container;
  image: LocalImage;
}

const repoOf = (image: string) => image.replace(/@sha256:.*$/, '').replace(/:[^/:]+$/, '');

/** `--x=:8080`, `--x=0.0.0.0:8080`, `--x=[::]:8080` → `--x=127.0.0.1:<local>`. */
function rewritePorts(args: string[], ports: Record<number, number>): string[] {
  return args.map((a) => {
    for (const [container, local] of Object.entries(ports)) {
      const m = a.match(new RegExp(`^(--[\\w-]+=)(0\\.0\\.0\\.0|\\[::\\]|)?:${container}$`));
      if (m) return `${m[1]}127.0.0.1:${local}`;
    }
    return a;
  });
}

/** Downward API values a local process can be given. */
function fieldRef(pod: V1Pod, path: string): string | undefined {
  const m = pod.metadata ?? {};
  const values: Record<string, string | undefined> = {
    'metadata.name': m.name,
    'metadata.namespace': m.namespace,
    'metadata.uid': m.uid,
    'spec.nodeName': pod.spec?.nodeName,
    'spec.serviceAccountName': pod.spec?.serviceAccountName,
    'status.podIP': '127.0.0.1',
    'status.hostIP': '127.0.0.1',
  };
  return values[path];
}

/**
 * Stands in for the kubelet on a simulated cluster, for the pods whose image this repository can
 * run: each such pod that reaches Running gets its container run as a local process, with the
 * pod's args (listen ports moved to free local ones), its environment (downward API included),
 * and its ServiceAccount's identity, so what an operator may do is exactly what the chart's RBAC
 * grants. A process that exits is restarted with backoff (restartPolicy Always); one whose pod is
 * deleted gets SIGTERM, then SIGKILL after the pod's grace period.
 */
/**
 * The process has ended: with an exit code, or by a signal (then `exitCode` stays null and
 * `signalCode` names it: a SIGKILLed process would otherwise look alive for good).
 */
const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

export function startPodRunner(kubeConfig: KubeConfig, options: PodRunnerOptions): PodRunner {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const entries = new Map<string, Entry>();
  let stopped = false;

  async function start(e: Entry) {
    const c = e.container;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', ...e.image.env };
    for (const v of c.env ?? []) {
      if (v.value !== undefined) env[v.name] = v.value;
      else if (v.valueFrom?.fieldRef) env[v.name] = fieldRef(e.pod, v.valueFrom.fieldRef.fieldPath) ?? '';
    }
    env.KUBECONFIG = await options.credentials(e.namespace, e.pod.spec?.serviceAccountName ?? 'default');
    // What the container runtime would run (the image's ENTRYPOINT and CMD, the pod's command
    // and args), with the image's files mapped to this machine's.
    const argv = rewritePorts(containerArgv(c, e.image), e.ports);
    const { file, args } = localProcess(argv, e.image);
    e.log.write(`--- ${new Date().toISOString()} starting ${c.image} as ${e.pod.spec?.serviceAccountName}: ${argv.join(' ')}\n`);
    const child = spawn(file, args, { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    e.child = child;
    e.pid = child.pid;
    e.ready = false;
    if (child.pid) guardPid(child.pid);
    child.stdout.pipe(e.log, { end: false });
    child.stderr.pipe(e.log, { end: false });
    child.on('exit', (code, signal) => {
      if (child.pid) releasePid(child.pid);
      e.log.write(`--- ${new Date().toISOString()} exited (${signal ?? code})\n`);
      e.ready = false;
      if (e.stopping || stopped) return;
      // restartPolicy Always, with the kubelet's backoff (10 s doubling, capped at 5 min).
      e.restarts++;
      e.restartAt = Date.now() + Math.min(10_000 * 2 ** (e.restarts - 1), 300_000);
    });
  }

  async function probe(e: Entry) {
    if (!e.child || exited(e.child)) return;
    const p = e.container.readinessProbe?.httpGet;
    if (!p) return void (e.ready = true);
    const port = typeof p.port === 'number' ? p.port : e.container.ports?.find((x) => x.name === p.port)?.containerPort;
    const local = port && e.ports[port];
    if (!local) return void (e.ready = true);
    e.ready = await fetch(`http://127.0.0.1:${local}${p.path ?? '/'}`, { signal: AbortSignal.timeout(1_000) }).then(
      (r) => r.ok,
      () => false,
    );
  }

  function terminate(e: Entry) {
    if (e.stopping) return;
    e.stopping = true;
    const child = e.child;
    if (!child || exited(child)) return;
    child.kill('SIGTERM');
    const grace = (e.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    setTimeout(() => !exited(child) && child.kill('SIGKILL'), grace).unref();
  }

  async function sync() {
    const pods = (await core.listPodForAllNamespaces()).items.flatMap((pod) => {
      const running = pod.status?.phase === 'Running' && !pod.metadata?.deletionTimestamp;
      for (const container of pod.spec?.containers ?? []) {
        const image = options.images[repoOf(container.image ?? '')];
        if (image && running) return [{ pod, container, image, uid: pod.metadata!.uid! }];
      }
      return [];
    });
    // Pods gone (or going) first: their replacements may need what they hold.
    const current = new Set(pods.map((p) => p.uid));
    for (const [uid, e] of entries) {
      if (current.has(uid)) continue;
      terminate(e);
      if (!e.child || exited(e.child)) {
        e.log.end();
        entries.delete(uid);
      }
    }
    for (const { pod, container, image, uid } of pods) {
      let e = entries.get(uid);
      if (!e) {
        // Pods have addresses of their own; here they share 127.0.0.1. A replacement whose webhook
        // port a terminating pod still holds starts once that one let go of it (its webhook URL,
        // which the API server was told, must reach the replacement), as if it had its own address.
        const webhookPort = container.ports?.find((p) => p.name === 'webhook')?.containerPort;
        const leaving = [...entries.values()].some((x) => x.stopping && webhookPort !== undefined && x.ports[webhookPort] === webhookPort);
        if (leaving) continue;
        const ports: Record<number, number> = {};
        const taken = new Set([...entries.values()].filter((x) => !x.stopping).flatMap((x) => Object.values(x.ports)));
        for (const p of container.ports ?? []) {
          // The webhook port keeps its number: the API server was told it (the chart's webhook.url,
          // on a port picked free for it). A second replica gets another port; one answers.
          ports[p.containerPort] = p.name === 'webhook' && !taken.has(p.containerPort) ? p.containerPort : await freePort();
        }
        const logFile = join(options.logDir, `${pod.metadata!.namespace}_${pod.metadata!.name}.log`);
        e = {
          namespace: pod.metadata!.namespace!,
          name: pod.metadata!.name!,
          uid,
          ports,
          restarts: 0,
          logFile,
          ready: false,
          log: createWriteStream(logFile, { flags: 'a' }),
          stopping: false,
          pod,
          container,
          image,
        };
        entries.set(uid, e);
        await start(e);
      } else if (e.restartAt && Date.now() >= e.restartAt && !e.stopping) {
        e.restartAt = undefined;
        await start(e);
      }
      await probe(e);
    }
  }

  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    try {
      await sync();
    } catch {
      /* the API server may be restarting or stopping: try again */
    }
    if (!stopped) timer = setTimeout(() => void loop(), options.intervalMs ?? 500);
  };
  void loop();

  return {
    pods: () =>
      [...entries.values()].map(({ namespace, name, uid, pid, ports, restarts, logFile, ready }) => ({
        namespace,
        name,
        uid,
        pid,
        ports,
        restarts,
        logFile,
        ready,
      })),

    kill(namespace, name) {
      const e = [...entries.values()].find((x) => x.namespace === namespace && x.name === name);
      if (!e?.child || exited(e.child)) throw new Error(`no running process for pod ${namespace}/${name}`);
      e.stopping = true;
      e.child.kill('SIGKILL');
    },
    logs(namespace, name, lines = 40) {
      const e = [...entries.values()].find((x) => x.namespace === namespace && x.name === name);
      const file = e?.logFile ?? join(options.logDir, `${namespace}_${name}.log`);
      try {
        return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const exits = [...entries.values()].map((e) => {
        const child = e.child;
        terminate(e);
        return child && !exited(child) ? new Promise<void>((r) => child.once('exit', () => r())) : Promise.resolve();
      });
      await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 45_000))]);
      for (const e of entries.values()) e.log.end();
      entries.clear();
    },
  };
}
