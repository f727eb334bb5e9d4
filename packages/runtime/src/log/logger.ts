import { hostname } from 'node:os';
import { pino, type Logger, type LevelWithSilent, type LoggerOptions as PinoOptions } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerOptions {
  name?: string;
  level?: LevelWithSilent | string;
  /** json (default: one object per line on stdout) or pretty (for humans at a terminal). */
  format?: 'json' | 'pretty';
  /** `time` as pino writes it (epoch, milliseconds: the default) or ISO 8601, as most log stacks expect. */
  timeEncoding?: 'epoch' | 'iso8601';
  /** `level` as pino's number (30: the default) or its name ("info"), as most log stacks expect. */
  levelEncoding?: 'number' | 'string';
  /** Where lines go; stdout by default. */
  destination?: NodeJS.WritableStream;
}

// Never log Secret data or private keys: the paths below are blanked wherever they appear in a
// logged object, as a second line of defence behind not logging them at all.
const REDACT = ['*.data', '*.stringData', '*.privateKey', '*.key', 'req.headers.authorization', '*.token'];

/**
 * pino writing straight to the destination: no transports, whose worker threads do not survive
 * bundling. `pretty` formats in-process, synchronously.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = (options.level ?? process.env.LOG_LEVEL ?? 'info') as LevelWithSilent;
  const base: PinoOptions = {
    level,
    // The operator is `logger`, never `name`: `name` (with `namespace`) is the object a line is about.
    base: { pid: process.pid, hostname: hostname(), ...(options.name ? { logger: options.name } : {}) },
    redact: { paths: REDACT, censor: '[redacted]' },
    serializers: { err: pino.stdSerializers.err },
    ...(options.timeEncoding === 'iso8601' ? { timestamp: pino.stdTimeFunctions.isoTime } : {}),
    ...(options.levelEncoding === 'string' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
  };
  if (options.format === 'pretty') {
    return pino(
      base,
      pretty({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: options.destination ?? 1, sync: true }),
    );
  }
  return pino(base, options.destination ?? pino.destination({ dest: 1, sync: false }));
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger = (): Logger => pino({ level: 'silent' });
