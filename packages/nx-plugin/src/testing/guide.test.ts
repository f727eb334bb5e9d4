import { describe, expect, it } from 'vitest';
import { applyEdit, guideSteps } from './guide.js';

const doc = [
  '## 7. Before',
  '```bash',
  'echo not this section',
  '```',
  '## 8. The example',
  'Text.',
  '```bash',
  '# a comment',
  'npx nx g thing',
  '',
  'OPKIT_E2E_MODE=local npx nx test',
  '```',
  '```ts file=apps/a/src/x.ts',
  'export const x = 1;',
  '```',
  '```console',
  'shown, not run',
  '```',
  '```ts edit=apps/a/src/y.ts',
  'const Y = 2;',
  '```',
  '## 9. After',
  '```bash',
  'echo nor this one',
  '```',
].join('\n');

describe('guideSteps', () => {
  it('takes the commands, whole files and edits of one section, in order, and nothing a reader is only shown', () => {
    expect(guideSteps(doc, '8.')).toEqual([
      { type: 'run', command: 'npx nx g thing' },
      { type: 'run', command: 'OPKIT_E2E_MODE=local npx nx test' },
      { type: 'file', path: 'apps/a/src/x.ts', content: 'export const x = 1;\n' },
      { type: 'edit', path: 'apps/a/src/y.ts', lines: ['const Y = 2;'] },
    ]);
  });

  it('fails on a missing section or an unclosed block, rather than running less than the guide says', () => {
    expect(() => guideSteps(doc, '10.')).toThrow(/no section/);
    expect(() => guideSteps('## 8. x\n```bash\nnpx nx g thing\n', '8.')).toThrow(/not closed/);
  });
});

describe('applyEdit', () => {
  it('replaces the one line declaring each name', () => {
    expect(applyEdit('const A = 1;\nconst B = 2;\nexport const C = 3;\n', ['const B = 20;', 'export const C = 30;'])).toBe(
      'const A = 1;\nconst B = 20;\nexport const C = 30;\n',
    );
  });

  it('refuses an edit it cannot place exactly', () => {
    expect(() => applyEdit('const A = 1;\n', ['const Z = 1;'], 'x.ts')).toThrow(/x\.ts declares Z 0 times/);
    expect(() => applyEdit('const A = 1;\nconst A = 2;\n', ['const A = 3;'])).toThrow(/declares A 2 times/);
    expect(() => applyEdit('const A = 1;\n', ['A = 3;'])).toThrow(/only replace declarations/);
  });
});
