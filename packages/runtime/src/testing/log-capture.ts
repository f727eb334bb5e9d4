import { pino, type Logger } from 'pino';
import { Writable } from 'node:stream';

export interface CapturedLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A logger whose lines a test can read back (and optionally echo, for debugging with OPKIT_TEST_LOGS=1). */
export function captureLogger(level = 'debug'): { logger: Logger; lines: CapturedLine[]; find(msg: string | RegExp): CapturedLine[] } {
  const lines: CapturedLine[] = [];
  const echo = !!process.env.OPKIT_TEST_LOGS;
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of chunk.toString().split('\n')) {
        if (!line) continue;
        lines.push(JSON.parse(line) as CapturedLine);
        if (echo) process.stderr.write(`${line}\n`);
      }
      cb();
    },
  });
  const logger = pino({ level, serializers: { err: pino.stdSerializers.err } }, sink);
  return { logger, lines, find: (msg) => lines.filter((l) => (typeof msg === 'string' ? l.msg === msg : msg.test(l.msg))) };
}
