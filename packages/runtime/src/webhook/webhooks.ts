import type { Logger } from 'pino';
import type { Client } from '../client/client.js';
import type { Clock } from '../clock/clock.js';
import { CustomResourceDefinition, MutatingWebhookConfiguration, Secret, ValidatingWebhookConfiguration } from '../client/kind.js';
import type { Transport } from '../client/transport.js';
import { CONVERSION_PATH, type VersionedResource } from '../crd/versioned-resource.js';
import { storageMigrationRules } from '../crd/storage-migration.js';
import type { RuntimeMetrics } from '../metrics/metrics.js';
import { rule, type PolicyRule } from '../rbac/rules.js';
import { admissionReview, type AdmissionRequest, type AdmissionWebhook } from './admission.js';
import { conversionReview, Converter } from './conversion.js';
import { WebhookServer } from './server.js';
import { ServingCertificates } from './serving-certificates.js';
import { CertificateFiles } from './certificate-files.js';
import { parseBindAddress } from '../manager/http-server.js';

export interface WebhookOptions {
  /** Where to listen (`:9443`); `0` disables webhooks (and the API server's calls fail by their failurePolicy). */
  bindAddress: { host: string; port: number } | undefined;
  /** The Secret for the self-managed certificates. */
  secret: { namespace: string; name: string };
  /** The names the API server calls by (the webhook Service's DNS name; 127.0.0.1 for a local run). */
  hosts: string[];
  /** The name of the chart's Mutating- and ValidatingWebhookConfiguration (one of each at most). */
  configurationName: string;
  /**
   * A directory holding `tls.crt` and `tls.key` that someone else keeps (OLM, or cert-manager
   * through a mounted Secret): served as they change, and the runtime then neither issues
   * certificates nor injects a CA (whoever keeps them does).
   */
  certDir?: string;
}

/** The webhook settings a manager takes (flags give them in an operator), every one optional. */
export interface WebhookSettings {
  /** `:9443` by default; `0` disables. */
  bindAddress?: string;
  /** Default `<name>-webhook-tls` in the operator's namespace. */
  secretName?: string;
  secretNamespace?: string;
  /** Default `<name>-webhook.<namespace>.svc`. */
  hosts?: string[];
  /** The Mutating/ValidatingWebhookConfiguration to keep the CA in; default the operator's name. */
  configurationName?: string;
  /** Serve the certificate someone else keeps in this directory (see WebhookOptions.certDir). */
  certDir?: string;
}

/** The settings with their defaults: names derived from the operator's, in its namespace. */
export function resolveWebhookOptions(operator: string, o: WebhookSettings, namespace: string): WebhookOptions {
  const ns = o.secretNamespace ?? namespace;
  return {
    bindAddress: parseBindAddress(o.bindAddress ?? ':9443'),
    secret: { namespace: ns, name: o.secretName ?? `${operator}-webhook-tls` },
    hosts: o.hosts?.length ? o.hosts : [`${operator}-webhook.${ns}.svc`],
    configurationName: o.configurationName ?? operator,
    certDir: o.certDir,
  };
}

/**
 * The manager's webhooks: admission webhooks and conversions registered by the operator, served over
 * TLS by every replica (the Service balances the API server's calls), with certificates the runtime
 * keeps itself. Nothing is started when nothing is registered.
 */
export class Webhooks {
  private readonly admission: AdmissionWebhook[] = [];
  private readonly converter = new Converter();
  private server?: WebhookServer;
  private certificates?: ServingCertificates;
  private certFiles?: CertificateFiles;
  private disabled = false;

  constructor(private readonly deps: { client: Client; transport: Transport; log: Logger; metrics: RuntimeMetrics; clock?: Clock }) {}

  addAdmission(hook: AdmissionWebhook): void {
    const taken = this.admission.find((h) => h.path === hook.path);
    if (taken) throw new Error(`webhook ${hook.name}: path ${hook.path} already serves ${taken.name} (give one a path of its own)`);
    this.admission.push(hook);
  }

  addConversion(resource: VersionedResource): void {
    this.converter.add(resource);
  }

  get any(): boolean {
    return this.admission.length > 0 || this.converter.resources.length > 0;
  }

  /** Calls the API server has made to this replica's webhooks since it started. */
  get calls(): number {
    return this.server?.calls ?? 0;
  }

  /** The port bound (after start). */
  get port(): number | undefined {
    return this.server?.port;
  }

  /**
   * The permissions the webhooks need (checked at start, granted by the chart): keeping the
   * certificates (unless someone else keeps them), and migrating the storage of each converted kind.
   */
  rbac(o: WebhookOptions): PolicyRule[] {
    if (!this.any) return [];
    const rules = this.converter.resources.flatMap(storageMigrationRules);
    if (o.certDir) return rules;
    const named = (r: PolicyRule, name: string): PolicyRule => ({ ...r, resourceNames: [name] });
    rules.push(named(rule(Secret, ['get', 'list', 'watch', 'update']), o.secret.name), rule(Secret, ['create']));
    if (this.admission.some((h) => h.type === 'mutating'))
      rules.push(named(rule(MutatingWebhookConfiguration, ['get', 'list', 'watch', 'update']), o.configurationName));
    if (this.admission.some((h) => h.type === 'validating'))
      rules.push(named(rule(ValidatingWebhookConfiguration, ['get', 'list', 'watch', 'update']), o.configurationName));
    for (const r of this.converter.resources) rules.push(named(rule(CustomResourceDefinition, ['get', 'list', 'watch', 'update']), r.crd.metadata.name));
    return rules;
  }

  async start(o: WebhookOptions, signal: AbortSignal): Promise<void> {
    // Webhooks registered but switched off (`--webhook-bind-address=0`): nothing to wait for.
    this.disabled = !o.bindAddress;
    if (!this.any || !o.bindAddress) return;
    const log = this.deps.log.child({ component: 'webhooks' });
    const server = new WebhookServer(o.bindAddress, log, this.deps.metrics);
    for (const hook of this.admission) server.route(hook.path, admissionRoute(hook, log));
    if (this.converter.resources.length) server.route(CONVERSION_PATH, conversionRoute(this.converter, log));
    if (o.certDir) {
      this.certFiles = new CertificateFiles(o.certDir, (pair) => server.setCertificate(pair), log);
      await this.certFiles.start();
      await server.start();
      this.server = server;
      return;
    }
    const hasType = (t: AdmissionWebhook['type']) => this.admission.some((h) => h.type === t);
    this.certificates = new ServingCertificates(this.deps.client, this.deps.transport, log, {
      secret: o.secret,
      hosts: o.hosts,
      inject: {
        mutating: hasType('mutating') ? [o.configurationName] : [],
        validating: hasType('validating') ? [o.configurationName] : [],
        crds: this.converter.resources.map((r) => r.crd.metadata.name),
      },
      clock: this.deps.clock,
    });
    this.certificates.onCertificate((pair) => server.setCertificate(pair));
    this.certificates.start();
    await server.start();
    this.server = server;
    // Every replica keeps the certificates: writes are guarded by resourceVersion, so two replicas
    // renewing at once write once, and the conversion webhook must work before any leader exists
    // (the operator's own cache lists through it).
    void this.certificates.keep(signal);
  }

  /**
   * For /readyz: whether this replica can answer the API server's calls, that is, serves a
   * certificate. Trouble keeping the certificates (an injection refused, a Secret that cannot be
   * written) is not: the certificate served is still good, and a replica taken out of the Service
   * for it would turn a housekeeping problem into an outage. That shows in `problem`.
   */
  ready(): true | string {
    if (!this.any || this.disabled || this.server?.ready) return true;
    return this.problem() ?? (this.server ? 'webhook server has no serving certificate yet' : 'webhook server not started yet');
  }

  /** Why the certificates are not being kept, if they are not. */
  problem(): string | undefined {
    return this.certificates?.problem ?? this.certFiles?.problem;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    this.certFiles?.stop();
    await this.certificates?.stop();
  }
}

/** A body that is not the review its route serves: the caller's mistake, answered 400. */
export class ReviewError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReviewError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What the webhook Service hears on an admission path: the API server's AdmissionReview, or
 * anything any pod that reaches the Service sends. A review is answered; anything else is a
 * ReviewError (400), before the hook sees it.
 */
export function admissionRoute(hook: AdmissionWebhook, log: Logger): (body: unknown) => Promise<unknown> {
  return async (body) => {
    const request = isObject(body) ? body.request : undefined;
    if (!isObject(request) || typeof request.uid !== 'string' || !request.uid) throw new ReviewError('not an AdmissionReview: request.uid is missing');
    if (typeof request.operation !== 'string') throw new ReviewError('not an AdmissionReview: request.operation is missing');
    if (!isObject(request.userInfo)) throw new ReviewError('not an AdmissionReview: request.userInfo is missing');
    for (const field of ['object', 'oldObject'] as const) {
      if (request[field] !== undefined && request[field] !== null && !isObject(request[field]))
        throw new ReviewError(`not an AdmissionReview: request.${field} is not an object`);
    }
    const r = request as unknown as AdmissionRequest;
    const response = await hook.handle(r);
    if (!response.allowed)
      log.info(
        { webhook: hook.name, operation: r.operation, namespace: r.namespace, name: r.name, user: r.userInfo.username, message: response.status?.message },
        'admission refused',
      );
    return admissionReview(response);
  };
}

/** The same for the conversion path: a ConversionReview is converted; anything else is a ReviewError. */
export function conversionRoute(converter: Converter, log: Logger): (body: unknown) => unknown {
  return (body) => {
    const request = isObject(body) ? body.request : undefined;
    if (!isObject(request) || typeof request.uid !== 'string' || !request.uid) throw new ReviewError('not a ConversionReview: request.uid is missing');
    if (typeof request.desiredAPIVersion !== 'string') throw new ReviewError('not a ConversionReview: request.desiredAPIVersion is missing');
    if (!Array.isArray(request.objects) || !request.objects.every(isObject))
      throw new ReviewError('not a ConversionReview: request.objects is not a list of objects');
    const response = converter.review(request as unknown as Parameters<Converter['review']>[0]);
    if (response.result.status === 'Failure') log.warn({ desiredAPIVersion: request.desiredAPIVersion, message: response.result.message }, 'conversion failed');
    return conversionReview(response);
  };
}
