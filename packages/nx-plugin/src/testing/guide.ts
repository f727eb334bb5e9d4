// A guide's section as steps a test can run: the commands of its `bash` blocks, the files it shows
// whole (```ts file=<path>), and the lines it changes in a file (```ts edit=<path>: each
// `const NAME …` line replaces the file's one line declaring NAME). Blocks of other languages
// (```console, ```text) are shown to the reader and not run.

export type GuideStep = { type: 'run'; command: string } | { type: 'file'; path: string; content: string } | { type: 'edit'; path: string; lines: string[] };

/** The steps of the section under the `## ` heading starting with `heading`, in order. */
export function guideSteps(markdown: string, heading: string): GuideStep[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`## ${heading}`));
  if (start < 0) throw new Error(`no section "## ${heading}…"`);
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const steps: GuideStep[] = [];
  for (let i = 0; i < section.length; i++) {
    const line = section[i]!;
    const open = /^```(\S*)\s*(.*)$/.exec(line);
    if (!open) continue;
    const close = section.findIndex((l, j) => j > i && l === '```');
    if (close < 0) throw new Error(`a code block opened at "${line}" is not closed`);
    const body = section.slice(i + 1, close);
    const [, lang = '', info = ''] = open;
    const attr = (name: string) => new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(info)?.[1];
    if (lang === 'bash') {
      for (const command of body) if (command.trim() && !command.trim().startsWith('#')) steps.push({ type: 'run', command: command.trim() });
    } else if (attr('file')) {
      steps.push({ type: 'file', path: attr('file')!, content: `${body.join('\n')}\n` });
    } else if (attr('edit')) {
      steps.push({ type: 'edit', path: attr('edit')!, lines: body });
    }
    i = close;
  }
  return steps;
}

const declared = (line: string) => /^(?:export )?const (\w+)\b/.exec(line)?.[1];

/** Applies an `edit` step: each of its `const NAME` lines replaces the one line of `text` that declares NAME. */
export function applyEdit(text: string, edit: string[], path = 'the file'): string {
  const lines = text.split('\n');
  for (const line of edit) {
    const name = declared(line);
    if (!name) throw new Error(`an edit of ${path} may only replace declarations (const NAME = …), not: ${line}`);
    const at = lines.flatMap((l, i) => (declared(l) === name ? [i] : []));
    if (at.length !== 1) throw new Error(`${path} declares ${name} ${at.length} times: an edit needs exactly one`);
    lines[at[0]!] = line;
  }
  return lines.join('\n');
}
