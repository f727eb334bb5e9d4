import { loadavg } from 'node:os';
/** Prints benchmark figures as a Markdown table, so runs can be pasted into notes as they are. */
export function table(rows: Record<string, string | number>[]): void {
  const [first] = rows;
  if (!first) return;
  const cols = Object.keys(first);
  const fmt = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(2)) : v);
  console.log(`| ${cols.join(' | ')} |`);
  console.log(`| ${cols.map(() => '---').join(' | ')} |`);
  for (const r of rows) console.log(`| ${cols.map((c) => fmt(r[c] ?? '')).join(' | ')} |`);
}

export const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** Heap after repeated full GCs (needs --expose-gc). */
export async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setTimeout(r, 50));
  }
  return process.memoryUsage().heapUsed;
}

/** Runs a bench's main and exits: 0 once it printed its figures, 1 (with the error) when it could not. */
export function runBench(main: () => Promise<void>): void {
  void main().then(
    () => process.exit(0),
    (e: Error) => {
      console.error(e);
      process.exit(1);
    },
  );
}

/** The load average (1, 5 and 15 minutes), printed beside every figure. */
export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
