import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../control-plane/control-plane.js';
import { freePort } from '../net/ports.js';
import { waitFor } from '../wait.js';
import { startIngressStandIn, type IngressStandIn } from './ingress-stand-in.js';

/** A GET with an explicit Host header (fetch does not let one be set). */
function get(port: number, host: string, path: string, userAgent = 'test'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, 'user-agent': userAgent }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the ingress stand-in', () => {
  let plane: ControlPlane;
  let standIn: IngressStandIn;
  let port: number;
  let core: CoreV1Api;
  let net: NetworkingV1Api;
  const ns = 'default';
  let madeInProcess = 0;

  // An image whose ENTRYPOINT is node and CMD the echo server, as Dockerfiles of Node apps say.
  const echoImage = {
    entrypoint: ['/usr/local/bin/node', 'echo-server.mjs'],
    cmd: [],
    workdir: '/srv',
    env: {},
    files: { '/usr/local/bin/node': process.execPath, '/srv/echo-server.mjs': join(import.meta.dirname, 'fixtures/echo-server.mjs') },
  };

  beforeAll(async () => {
    plane = await startControlPlane({ nodes: 1 });
    port = await freePort();
    // The same server made in the stand-in's own process from the pod's args.
    const inProcess = {
      inProcess: (args: string[]) => (
        madeInProcess++,
        createServer((req, res) => res.end(JSON.stringify({ host: req.headers.host, path: req.url, args, pid: process.pid })))
      ),
    };
    standIn = await startIngressStandIn(plane.kubeConfig, { port, images: { 'example/echo': echoImage, 'example/in-process': inProcess } });
    core = plane.kubeConfig.makeApiClient(CoreV1Api);
    net = plane.kubeConfig.makeApiClient(NetworkingV1Api);
  });
  afterAll(async () => {
    await standIn?.stop();
    await plane?.stop();
  });

  it('answers 404 when no Ingress routes the host and path', async () => {
    expect((await get(port, 'nobody.example', '/x')).status).toBe(404);
  });

  it('routes by host and Exact path to a Running pod behind the Service, running its container with the args given', async () => {
    const labels = { app: 'echo' };
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'echo', labels },
        spec: {
          containers: [{ name: 'c', image: 'example/echo:1.0', args: ['--listen-port=8089', '--greeting=hi'], ports: [{ name: 'http', containerPort: 8089 }] }],
        },
      },
    });
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'echo' }, spec: { selector: labels, ports: [{ port: 80, targetPort: 'http' as never }] } },
    });
    await net.createNamespacedIngress({
      namespace: ns,
      body: {
        metadata: { name: 'echo' },
        spec: {
          rules: [
            { host: 'echo.example', http: { paths: [{ path: '/exact', pathType: 'Exact', backend: { service: { name: 'echo', port: { number: 80 } } } }] } },
          ],
        },
      },
    });
    await waitFor('the pod to run', async () => (await core.readNamespacedPod({ namespace: ns, name: 'echo' })).status?.phase === 'Running', {
      timeoutMs: 30_000,
    });

    const res = await get(port, 'echo.example', '/exact');
    expect(res.status).toBe(200);
    const echoed = JSON.parse(res.body) as { host: string; path: string; args: string[] };
    expect(echoed.path).toBe('/exact');
    expect(echoed.host).toBe('echo.example');
    expect(echoed.args).toContain('--greeting=hi');
    expect(echoed.args.find((a) => a.startsWith('--listen-port='))).not.toBe('--listen-port=8089');
    expect(standIn.running()).toEqual([`${ns}/echo`]);

    expect((await get(port, 'echo.example', '/exact/more')).status).toBe(404);
    expect((await get(port, 'other.example', '/exact')).status).toBe(404);
  });

  it('shows the CA a different answer when told to, while everyone else still reaches the pod', async () => {
    standIn.answerCAWith('echo.example', 'not-the-key');
    expect((await get(port, 'echo.example', '/exact', 'LetsEncrypt-Pebble-VA (linux; amd64)')).body).toBe('not-the-key');
    expect((await get(port, 'echo.example', '/exact')).body).toContain('"path":"/exact"');
  });

  it('ends the process when its pod goes, and answers 503 while the Service has no pod', async () => {
    await core.deleteNamespacedPod({ namespace: ns, name: 'echo', gracePeriodSeconds: 0 });
    await waitFor('the process to end', () => standIn.running().length === 0, { timeoutMs: 30_000 });
    await waitFor('the pod to be gone', async () => !(await core.listNamespacedPod({ namespace: ns })).items.length, { timeoutMs: 30_000 });
    expect((await get(port, 'echo.example', '/exact')).status).toBe(503);
  });

  it('serves an in-process image from one server made with the pod’s args for all its requests, and stops it when the pod goes', async () => {
    const labels = { app: 'in-process' };
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'in-process', labels },
        spec: { containers: [{ name: 'c', image: 'example/in-process:2', args: ['--token=t1'], ports: [{ containerPort: 8089 }] }] },
      },
    });
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'in-process' }, spec: { selector: labels, ports: [{ port: 80, targetPort: 8089 as never }] } },
    });
    await net.createNamespacedIngress({
      namespace: ns,
      body: {
        metadata: { name: 'in-process' },
        spec: {
          rules: [
            { host: 'in.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'in-process', port: { number: 80 } } } }] } },
          ],
        },
      },
    });
    await waitFor('the pod to run', async () => (await core.readNamespacedPod({ namespace: ns, name: 'in-process' })).status?.phase === 'Running', {
      timeoutMs: 30_000,
    });
    const answers = await Promise.all([get(port, 'in.example', '/a'), get(port, 'in.example', '/b'), get(port, 'in.example', '/c')]);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({ host: 'in.example', args: ['--token=t1'], pid: process.pid });
    }
    expect(madeInProcess).toBe(1);
    expect(standIn.running()).toEqual([`${ns}/in-process`]);

    await core.deleteNamespacedPod({ namespace: ns, name: 'in-process', gracePeriodSeconds: 0 });
    await waitFor('the server to stop', () => standIn.running().length === 0, { timeoutMs: 30_000 });
  });
});
