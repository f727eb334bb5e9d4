import type { Condition } from './api.js';

/** "3m ago", "in 59d": how long from now, as kubectl prints ages. */
export function relative(iso: string | undefined, now: number): string {
  if (!iso) return '-';
  const ms = Date.parse(iso) - now;
  const s = Math.abs(ms) / 1000;
  const text = s < 120 ? `${Math.round(s)}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172_800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`;
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** A condition in one line: `Ready=False (Pending): Waiting for…`. */
export const conditionLine = (c: Condition | undefined) =>
  c ? `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}` : '-';

export const conditionOf = (o: { status?: { conditions?: Condition[] } }, type: string) => o.status?.conditions?.find((c) => c.type === type);

/** Cuts a line to the terminal's width, so a screen shows the whole story. */
export const fit = (line: string, width: number) => (line.length > width ? `${line.slice(0, width - 1)}…` : line);

/** Wraps a line at word boundaries to the width (the explanation is never cut off). */
export function wrap(line: string, width: number, indent = '     '): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > width) {
    const cut = rest.lastIndexOf(' ', width);
    const at = cut > indent.length ? cut : width;
    out.push(rest.slice(0, at));
    rest = indent + rest.slice(at).trimStart();
  }
  out.push(rest);
  return out;
}
