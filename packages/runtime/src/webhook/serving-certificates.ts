import type { Logger } from 'pino';
import { Informer } from '../cache/informer.js';
import { systemClock, type Clock } from '../clock/clock.js';
import type { Client } from '../client/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../client/errors.js';
import { CustomResourceDefinition, MutatingWebhookConfiguration, Secret, ValidatingWebhookConfiguration, type Kind } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import { keyOf, type KubeObject, type ObjectKey } from '../client/types.js';
import { caughtUp } from '../controller/read-your-writes.js';
import { X509Certificate } from 'node:crypto';
import { bundleCas, CA_LIFETIME_MS, decideRotation, heldCertificates, keyFor, pemKeys, SERVING_LIFETIME_MS, trustedBy, type TargetTrust } from './rotation.js';
import { issueCa, issueServing, type KeyPair } from './self-signed.js';

/** Where the certificates live and who must trust them. */
export interface ServingCertificateOptions {
  /** The Secret that holds the CA and the serving certificate, shared by every replica. */
  secret: ObjectKey & { namespace: string };
  /** The names the API server calls the webhook by (the Service's DNS name, or 127.0.0.1 for a local run). */
  hosts: string[];
  /** Objects whose caBundle is kept pointing at the CA. Missing ones are skipped (the chart may not install them). */
  inject: { mutating?: string[]; validating?: string[]; crds?: string[] };
  clock?: Clock;
  /** How long a CA and a serving certificate live (default a year and 90 days); each is renewed at two thirds. */
  lifetimes?: { caMs?: number; servingMs?: number };
}

type Target = { kind: Kind; name: string };
/** How long a pass waits for its informers to show this loop's last write (as the controllers' hold). */
const OWN_WRITE_WAIT_MS = 10_000;
/**
 * After a write: at once (the next pass waits for its informers to show it); after a write refused
 * for a newer version (another replica's): until the informer's event brings it, 1 s at most.
 */
const afterWrite = (made: boolean) => (made ? 0 : 1_000);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : undefined);
const secretData = (s: KubeObject | undefined) => (s as { data?: Record<string, string> } | undefined)?.data ?? {};

/**
 * The runtime's own webhook certificates, for a cluster without a certificate operator (or for the
 * certificate operator itself): a CA and a serving certificate in one Secret, renewed before they
 * expire, and the CA injected into the webhook configurations and CRDs that call this operator, as
 * cert-manager's cainjector would.
 *
 * Every replica serves webhooks, so every replica reads the Secret (`onCertificate`). Every replica
 * also keeps it (`keep`): conversion must be served before any leader exists, since the operator's
 * own caches list through it. That is safe because each pass decides from what the Secret and the
 * targets hold now (rotation.ts) and every write is guarded by resourceVersion: replicas deciding
 * at once write once, and the others read the result and find nothing left to do. Replicas called
 * by different names converge on one serving certificate for all of them.
 */
/**
 * The field manager of the writes every replica makes, leader or not (the webhook certificates:
 * conversion must be served before any leader exists). Each is guarded by resourceVersion. The
 * fault-run invariants exempt these writes, and only these, from "only the leader writes".
 */
export const everyReplicaFieldManager = (fieldManager: string): string => `${fieldManager}-webhook-certificates`;

export class ServingCertificates {
  private readonly secretInformer: Informer<KubeObject>;
  /**
   * This loop's last writes, until its informers show them: a pass that decided on what they showed
   * before would do the same thing again (a new CA, a new key) and fail on a stale version, at API
   * latency, for as long as the watch lags.
   */
  private unseen: { informer: Informer<KubeObject>; key: string; resourceVersion: string; at: number }[] = [];
  private readonly targetInformers: { target: Target; informer: Informer<KubeObject> }[];
  private readonly clock: Clock;
  private wake?: () => void;
  private lastError?: string;
  /** Every replica writes these, not only the leader: managedFields and audit logs say so. */
  private readonly writes: { fieldManager: string };

  constructor(
    private readonly client: Client,
    transport: Transport,
    private readonly log: Logger,
    readonly options: ServingCertificateOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.writes = { fieldManager: everyReplicaFieldManager(client.options.fieldManager) };
    const byName = (name: string) => ({ fieldSelector: `metadata.name=${name}` });
    this.secretInformer = new Informer(transport, Secret as Kind<KubeObject>, log.child({ informer: 'webhook-secret' }), {
      namespace: options.secret.namespace,
      ...byName(options.secret.name),
    });
    const targets: Target[] = [
      ...(options.inject.mutating ?? []).map((name) => ({ kind: MutatingWebhookConfiguration as Kind, name })),
      ...(options.inject.validating ?? []).map((name) => ({ kind: ValidatingWebhookConfiguration as Kind, name })),
      ...(options.inject.crds ?? []).map((name) => ({ kind: CustomResourceDefinition as Kind, name })),
    ];
    this.targetInformers = targets.map((target) => ({
      target,
      informer: new Informer(transport, target.kind as Kind<KubeObject>, log.child({ informer: target.kind.plural }), byName(target.name)),
    }));
    // Any change to the Secret or a target (a chart upgrade that reset a caBundle) wakes the keeper.
    const poke = { onAdd: () => this.wake?.(), onUpdate: () => this.wake?.(), onDelete: () => this.wake?.() };
    this.secretInformer.addHandler(poke);
    for (const t of this.targetInformers) t.informer.addHandler(poke);
  }

  /** Calls `fn` with the serving certificate now and whenever the Secret changes (every replica). */
  onCertificate(fn: (pair: KeyPair) => void): void {
    const load = (s: KubeObject) => {
      const d = secretData(s);
      const cert = unb64(d['tls.crt']);
      const key = unb64(d['tls.key']);
      if (cert && key) fn({ cert, key });
    };
    this.secretInformer.addHandler({ onAdd: load, onUpdate: (_, s) => load(s) });
  }

  start(): void {
    this.secretInformer.start();
    for (const t of this.targetInformers) t.informer.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.secretInformer.stop(), ...this.targetInformers.map((t) => t.informer.stop())]);
  }

  /** For /readyz of the leader: why the certificates are not in order, if they are not. */
  get problem(): string | undefined {
    return this.lastError;
  }

  /**
   * The leader's loop: issue or renew what the rotation policy says, keep every target's caBundle
   * equal to the CA bundle, and sleep until the next renewal or a change. Errors are retried with
   * backoff (1 s doubling to 1 min) and reported on /readyz.
   */
  async keep(signal: AbortSignal): Promise<void> {
    await Promise.all([this.secretInformer.waitForSync(), ...this.targetInformers.map((t) => t.informer.waitForSync())]);
    let backoff = 1_000;
    while (!signal.aborted) {
      const woken = { now: false }; // set by a wake-up while this pass ran
      const wakeup = new Promise<void>((r) => (this.wake = () => ((woken.now = true), r())));
      let sleepMs: number;
      try {
        sleepMs = await this.syncOnce();
        this.lastError = undefined;
        backoff = 1_000;
      } catch (err) {
        this.lastError = `webhook certificates: ${(err as Error).message}`;
        this.log.warn({ err, retryInMs: backoff }, 'could not keep the webhook certificates; retrying');
        sleepMs = backoff;
        backoff = Math.min(backoff * 2, 60_000);
      }
      if (woken.now) continue;
      await Promise.race([this.clock.sleep(Math.min(sleepMs, 2 ** 31 - 1), signal), wakeup]);
    }
  }

  /** What every target's caBundle holds (targets that do not exist are skipped: the chart may not install them). */
  private targetTrust(): TargetTrust[] {
    const out: TargetTrust[] = [];
    for (const { target, informer } of this.targetInformers) {
      const obj = informer.store.get(target.name) as (KubeObject & Record<string, any>) | undefined;
      if (!obj) continue;
      if (target.kind === CustomResourceDefinition) {
        const cc = obj.spec?.conversion?.webhook?.clientConfig;
        if (cc) out.push({ name: `CustomResourceDefinition ${target.name}`, trusts: trustedBy(cc.caBundle) });
        continue;
      }
      const hooks = (obj.webhooks ?? []) as { clientConfig: { caBundle?: string } }[];
      // Each webhook of the configuration has its own caBundle: the configuration trusts what all of them do.
      const [first, ...rest] = hooks.map((h) => trustedBy(h.clientConfig.caBundle));
      out.push({ name: `${target.kind.kind} ${target.name}`, trusts: (first ?? []).filter((fp) => rest.every((r) => r.includes(fp))) });
    }
    return out;
  }

  /** One pass: decides (rotation.ts) and does what it says; returns how long to sleep. Exposed for tests. */
  async syncOnce(): Promise<number> {
    // Woken by the informers' events: the write's own event ends the wait (OWN_WRITE_WAIT_MS at most).
    this.unseen = this.unseen.filter(
      (w) =>
        this.clock.monotonic() - w.at < OWN_WRITE_WAIT_MS &&
        !caughtUp({ kind: 'written', resourceVersion: w.resourceVersion }, w.informer.store.get(w.key), w.informer.resourceVersion),
    );
    if (this.unseen.length) return Math.max(...this.unseen.map((w) => w.at + OWN_WRITE_WAIT_MS - this.clock.monotonic()));
    const key = keyOf({ metadata: this.options.secret });
    const secret = this.secretInformer.store.get(key);
    const d = secretData(secret);
    const data = { caCert: unb64(d['ca.crt']), caKey: unb64(d['ca.key']), cert: unb64(d['tls.crt']), key: unb64(d['tls.key']) };
    const now = this.clock.now();
    const decision = decideRotation(heldCertificates(data), this.targetTrust(), this.options.hosts, now);
    const cas = bundleCas(data.caCert);
    const keys = pemKeys(data.caKey ?? '');
    const live = cas.filter(({ cert }) => new Date(cert.validTo).getTime() > now);
    const lifetimes = { ca: this.options.lifetimes?.caMs ?? CA_LIFETIME_MS, serving: this.options.lifetimes?.servingMs ?? SERVING_LIFETIME_MS };
    const notBefore = now - 5 * 60_000; // clock skew between this host and the API server's
    // The bundle and the keys of its CAs, newest first; `tls.*` as they are unless replaced.
    const write = (bundle: { pem: string; cert: X509Certificate }[], extra: { caKey?: string; serving?: KeyPair } = {}) => {
      const ownKeys = bundle.map(({ cert }) => keyFor(cert, keys)).filter((k): k is string => !!k);
      const next: Record<string, string> = {
        'ca.crt': b64(bundle.map((c) => c.pem).join('')),
        'ca.key': b64([...(extra.caKey ? [extra.caKey] : []), ...ownKeys].join('')),
      };
      const serving = extra.serving ?? (data.cert && data.key ? { cert: data.cert, key: data.key } : undefined);
      if (serving) Object.assign(next, { 'tls.crt': b64(serving.cert), 'tls.key': b64(serving.key) });
      return this.writeSecret(secret, next);
    };
    switch (decision.action) {
      case 'add-ca': {
        this.log.info(
          { reason: decision.reason, secret: key },
          'adding a new webhook CA to the bundle; its serving certificate follows once every caller trusts it',
        );
        // Unique names: two CAs of one bundle must not share a subject.
        const ca = issueCa(`${this.options.secret.name}-ca@${Math.floor(now / 1000)}`, notBefore, now + lifetimes.ca);
        // The informer brings the write back, and the next pass injects it.
        return afterWrite(await write([{ pem: ca.cert, cert: new X509Certificate(ca.cert) }, ...live], { caKey: ca.key }));
      }
      case 'prune':
        this.log.info({ reason: decision.reason, secret: key }, 'dropping expired CAs from the webhook CA bundle');
        return afterWrite(await write(live));
      case 'inject':
        return afterWrite(await this.inject(live.map((c) => c.pem).join('')));
      case 'issue-serving': {
        const signer = live.find(({ cert }) => cert.fingerprint256 === decision.signer)!;
        this.log.info({ reason: decision.reason, hosts: decision.hosts, secret: key }, 'issuing a webhook serving certificate');
        const serving = issueServing({ cert: signer.pem, key: keyFor(signer.cert, keys)! }, decision.hosts, notBefore, now + lifetimes.serving);
        return afterWrite(
          await write(
            cas.filter(({ cert }) => new Date(cert.validTo).getTime() > now),
            { serving },
          ),
        );
      }
      case 'wait':
        // Woken by the targets' informers when the injection lands; rechecked now and then meanwhile.
        this.log.debug({ reason: decision.reason }, 'webhook certificates: waiting');
        return 30_000;
      case 'keep':
        return decision.recheckAt - now;
    }
  }
  /** Whether the write was made (false: another writer's newer version is on its way to the informer). */
  private async writeSecret(current: KubeObject | undefined, data: Record<string, string>): Promise<boolean> {
    const { namespace, name } = this.options.secret;
    try {
      const written = current
        ? await this.client.update(Secret, { ...(current as object), data } as never, this.writes)
        : // Opaque, as the chart makes it (empty, so that `helm uninstall` removes it): a Secret's type cannot change.
          await this.client.create(
            Secret,
            { metadata: { namespace, name, labels: { 'app.kubernetes.io/component': 'webhook-certificates' } }, type: 'Opaque', data } as never,
            this.writes,
          );
      this.wrote(this.secretInformer, written);
    } catch (err) {
      // Another writer got there first (a previous leader): read again, decide again.
      if (isAlreadyExists(err) || isConflict(err)) return false;
      throw err;
    }
    return true;
  }

  private wrote(informer: Informer<KubeObject>, obj: KubeObject) {
    const resourceVersion = obj.metadata.resourceVersion;
    if (resourceVersion) this.unseen.push({ informer, key: keyOf(obj), resourceVersion, at: this.clock.monotonic() });
  }

  /** Whether every target was written or already right (false: one had a newer version than the informer's). */
  private async inject(bundlePem: string): Promise<boolean> {
    const caBundle = b64(bundlePem);
    let current = true;
    for (const { target, informer } of this.targetInformers) {
      const obj = informer.store.get(target.name) as (KubeObject & Record<string, any>) | undefined;
      if (!obj) continue;
      const next = structuredClone(obj) as KubeObject & Record<string, any>;
      if (target.kind === CustomResourceDefinition) {
        const cc = next.spec?.conversion?.webhook?.clientConfig;
        if (!cc || cc.caBundle === caBundle) continue;
        cc.caBundle = caBundle;
      } else {
        const hooks = (next.webhooks ?? []) as { clientConfig: { caBundle?: string } }[];
        if (hooks.every((h) => h.clientConfig.caBundle === caBundle)) continue;
        for (const h of hooks) h.clientConfig.caBundle = caBundle;
      }
      try {
        this.wrote(informer, await this.client.update(target.kind, next, this.writes));
        this.log.info({ kind: target.kind.kind, name: target.name }, 'injected the webhook CA');
      } catch (err) {
        if (isNotFound(err)) continue;
        // The informer brings the newer one, and wakes the loop.
        if (isConflict(err)) {
          current = false;
          continue;
        }
        throw err;
      }
    }
    return current;
  }
}
