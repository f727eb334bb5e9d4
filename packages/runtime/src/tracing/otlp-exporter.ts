import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { AttributeValue, SpanData, SpanSink } from './tracer.js';

const KIND = { internal: 1, server: 2, client: 3 } as const;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;

function attribute(key: string, value: AttributeValue) {
  if (Array.isArray(value)) return { key, value: { arrayValue: { values: value.map((v) => ({ stringValue: v })) } } };
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (typeof value === 'number') return { key, value: Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value } };
  return { key, value: { stringValue: value } };
}

/** Spans in OTLP/JSON (opentelemetry-proto's JSON mapping: hex ids, nanoseconds as strings). */
export function otlpJson(resource: Record<string, AttributeValue>, spans: SpanData[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: Object.entries(resource).map(([k, v]) => attribute(k, v)) },
        scopeSpans: [
          {
            scope: { name: '@opkit/runtime' },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: KIND[s.kind],
              startTimeUnixNano: String(s.startNs),
              endTimeUnixNano: String(s.endNs),
              attributes: Object.entries(s.attributes).map(([k, v]) => attribute(k, v)),
              status: { code: STATUS[s.status.code], ...(s.status.message ? { message: s.status.message } : {}) },
            })),
          },
        ],
      },
    ],
  };
}

export interface OtlpExporterOptions {
  /** The collector's base URL (`http://otel-collector:4318`); spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** Resource attributes: service.name and the like. */
  resource: Record<string, AttributeValue>;
  log: Logger;
  /** How often a batch is sent (default 5 s), and the most spans in one (512). */
  intervalMs?: number;
  maxBatch?: number;
  /** Spans kept while the collector is slow or away; beyond it the oldest are dropped (2,048). */
  maxQueue?: number;
}

/**
 * Sends finished spans to an OpenTelemetry collector over OTLP/HTTP with JSON bodies, in batches,
 * from a bounded queue: a collector that is down costs dropped spans (counted, logged once per
 * outage), never memory or a reconcile's time.
 */
export class OtlpExporter implements SpanSink {
  private queue: SpanData[] = [];
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  dropped = 0;
  sent = 0;
  private failing = false;

  constructor(private readonly o: OtlpExporterOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.o.intervalMs ?? 5_000);
    this.timer.unref();
  }

  push(span: SpanData): void {
    if (this.queue.length >= (this.o.maxQueue ?? 2_048)) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push(span);
    if (this.queue.length >= (this.o.maxBatch ?? 512)) void this.flush();
  }

  /** Sends what is queued (one batch at a time). */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    if (!this.queue.length) return;
    const batch = this.queue.splice(0, this.o.maxBatch ?? 512);
    this.sending = this.post(JSON.stringify(otlpJson(this.o.resource, batch)))
      .then(
        () => {
          this.sent += batch.length;
          if (this.failing) this.o.log.info('the trace collector answers again');
          this.failing = false;
        },
        (err: Error) => {
          this.dropped += batch.length;
          if (!this.failing)
            this.o.log.warn({ err: err.message, endpoint: this.o.endpoint }, 'could not send spans to the trace collector; dropping them until it answers');
          this.failing = true;
        },
      )
      .finally(() => (this.sending = undefined));
    await this.sending;
    if (this.queue.length) await this.flush();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private post(body: string): Promise<void> {
    const url = new URL(`${this.o.endpoint.replace(/\/$/, '')}/v1/traces`);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 10_000 },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode && res.statusCode < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }
}
