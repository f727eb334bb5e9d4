/** One line of the demo's status table. */
export interface Row {
  kind: string;
  name: string;
  status: string;
  detail: string;
  /** Converged: what this row should end as. */
  done: boolean;
}

type Cells = [string, string, string, string];
const width = (rows: Cells[], col: 0 | 1 | 2) => Math.max(...rows.map((r) => r[col].length));

/** Rows as aligned columns under a header, the detail cut to fit `maxWidth`. */
export function renderTable(rows: Row[], maxWidth = 160): string {
  const cells: Cells[] = [['KIND', 'NAME', 'STATUS', 'DETAIL'], ...rows.map((r): Cells => [r.kind, r.name, `${r.done ? '✓' : '…'} ${r.status}`, r.detail])];
  const w = [width(cells, 0), width(cells, 1), width(cells, 2)];
  return cells
    .map((r) => {
      const head = r
        .slice(0, 3)
        .map((c, i) => c.padEnd(w[i] ?? 0))
        .join('  ');
      const room = Math.max(10, maxWidth - head.length - 2);
      const detail = r[3].length > room ? `${r[3].slice(0, room - 1)}…` : r[3];
      return `${head}  ${detail}`.trimEnd();
    })
    .join('\n');
}

const key = (r: Row) => `${r.kind} ${r.name}`;

/** For a log (not a terminal): the rows that are new or changed since `before`, and those gone. */
export function changes(before: Map<string, Row>, now: Row[]): { changed: Row[]; gone: string[] } {
  const seen = new Set(now.map(key));
  const changed = now.filter((r) => {
    const old = before.get(key(r));
    return !old || old.status !== r.status || old.detail !== r.detail;
  });
  return { changed, gone: [...before.keys()].filter((k) => !seen.has(k)) };
}

export const indexRows = (rows: Row[]) => new Map(rows.map((r) => [key(r), r]));
