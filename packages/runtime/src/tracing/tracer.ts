import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/** An attribute value as OpenTelemetry allows: a scalar or a list of strings. */
export type AttributeValue = string | number | boolean | string[];

/** One finished span, as the exporter sends it. */
export interface SpanData {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: 'internal' | 'client' | 'server';
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  status: { code: 'unset' | 'ok' | 'error'; message?: string };
}

export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  setAttribute(key: string, value: AttributeValue | undefined): void;
  /** Marks the span failed, with the error's message. */
  fail(err: unknown): void;
  end(): void;
  /** The W3C `traceparent` header value that makes a callee's spans children of this one. */
  traceparent(): string;
}

/** Where finished spans go (the OTLP exporter; tests collect them). */
export interface SpanSink {
  push(span: SpanData): void;
}

const nowNs = () => process.hrtime.bigint() + OFFSET_NS;
// hrtime is monotonic from an arbitrary origin: anchor it to the wall clock once.
const OFFSET_NS = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

class RecordingSpan implements Span {
  private readonly data: SpanData;
  private ended = false;

  constructor(
    private readonly sink: SpanSink,
    name: string,
    kind: SpanData['kind'],
    parent: { traceId: string; spanId: string } | undefined,
    attributes: Record<string, AttributeValue>,
  ) {
    this.data = {
      traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      parentSpanId: parent?.spanId,
      name,
      kind,
      startNs: nowNs(),
      endNs: 0n,
      attributes,
      status: { code: 'unset' },
    };
  }

  get traceId() {
    return this.data.traceId;
  }

  get spanId() {
    return this.data.spanId;
  }

  setAttribute(key: string, value: AttributeValue | undefined) {
    if (value !== undefined) this.data.attributes[key] = value;
  }

  fail(err: unknown) {
    this.data.status = { code: 'error', message: err instanceof Error ? err.message : String(err) };
  }

  end() {
    if (this.ended) return;
    this.ended = true;
    this.data.endNs = nowNs();
    this.sink.push(this.data);
  }

  traceparent() {
    return `00-${this.data.traceId}-${this.data.spanId}-01`;
  }
}

/** A span that records nothing: what every call gets while tracing is off. */
const NOOP: Span = { traceId: '', spanId: '', setAttribute: () => undefined, fail: () => undefined, end: () => undefined, traceparent: () => '' };

/**
 * Tracing of reconciles and API calls, off unless a sink is set (the manager sets the OTLP exporter
 * when an endpoint is configured). While off, every call is a constant no-op: no ids, no clock
 * reads, no async context. While on, the active span follows the async flow (AsyncLocalStorage),
 * so an API call made anywhere in a reconcile becomes its child.
 */
export class Tracer {
  private readonly active = new AsyncLocalStorage<Span>();

  constructor(private sink?: SpanSink) {}

  get enabled(): boolean {
    return !!this.sink;
  }

  /** Turns tracing on (a sink) or off (undefined). */
  setSink(sink: SpanSink | undefined): void {
    this.sink = sink;
  }

  /** The span of the current async flow, if any. */
  current(): Span | undefined {
    return this.sink ? this.active.getStore() : undefined;
  }

  startSpan(name: string, options: { kind?: SpanData['kind']; attributes?: Record<string, AttributeValue>; parent?: Span } = {}): Span {
    if (!this.sink) return NOOP;
    const parent = options.parent ?? this.active.getStore();
    return new RecordingSpan(this.sink, name, options.kind ?? 'internal', parent && parent !== NOOP ? parent : undefined, { ...options.attributes });
  }

  /** Runs `fn` with `span` as the active span. */
  withSpan<R>(span: Span, fn: () => R): R {
    return this.sink && span !== NOOP ? this.active.run(span, fn) : fn();
  }
}
