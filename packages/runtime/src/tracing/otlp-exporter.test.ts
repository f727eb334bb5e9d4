import { describe, expect, it } from 'vitest';
import { captureLogger } from '../testing/log-capture.js';
import { OtlpExporter, otlpJson } from './otlp-exporter.js';
import { Tracer, type SpanData } from './tracer.js';

const span = (name: string): SpanData => ({
  traceId: 'a'.repeat(32),
  spanId: 'b'.repeat(16),
  name,
  kind: 'internal',
  startNs: 1n,
  endNs: 2n,
  attributes: { n: 1, f: 0.5, b: true, s: 'x', l: ['p', 'q'] },
  status: { code: 'error', message: 'boom' },
});

describe('tracing', () => {
  it('writes OTLP/JSON: hex ids, nanoseconds as strings, typed attribute values', () => {
    const doc = otlpJson({ 'service.name': 'op' }, [span('reconcile x')]);
    expect(doc.resourceSpans[0]!.scopeSpans[0]!.spans[0]).toEqual({
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      name: 'reconcile x',
      kind: 1,
      startTimeUnixNano: '1',
      endTimeUnixNano: '2',
      attributes: [
        { key: 'n', value: { intValue: '1' } },
        { key: 'f', value: { doubleValue: 0.5 } },
        { key: 'b', value: { boolValue: true } },
        { key: 's', value: { stringValue: 'x' } },
        { key: 'l', value: { arrayValue: { values: [{ stringValue: 'p' }, { stringValue: 'q' }] } } },
      ],
      status: { code: 2, message: 'boom' },
    });
  });

  it('keeps a bounded queue, and drops (and counts) what a collector that is away cannot take, saying so once', async () => {
    const logs = captureLogger();
    const e = new OtlpExporter({ endpoint: 'http://127.0.0.1:1', resource: {}, log: logs.logger, maxQueue: 3, maxBatch: 100 });
    for (let i = 0; i < 5; i++) e.push(span(`s${i}`));
    expect(e.dropped).toBe(2);
    await e.flush();
    e.push(span('again'));
    await e.flush();
    expect(e.dropped).toBe(6);
    expect(logs.lines.filter((l) => /could not send spans/.test(String(l.msg)))).toHaveLength(1);
  });

  it('costs nothing while off: no span, no ids, fn runs as is', () => {
    const t = new Tracer();
    const s = t.startSpan('x');
    expect(s.traceId).toBe('');
    expect(t.withSpan(s, () => t.current())).toBeUndefined();
  });
});
