import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManagedProcess } from './managed-process.js';

describe('ManagedProcess', () => {
  // The demo's Ctrl-C test once crashed here: a process's output arrived after its exit (a child
  // it left behind still held the pipe), and was written to a log already closed.
  it('keeps output that arrives after the process exited, from what it left running, in its log', async () => {
    const logFile = join(mkdtempSync(join(tmpdir(), 'managed-')), 'out.log');
    const p = new ManagedProcess({ name: 'parent', command: 'sh', args: ['-c', 'echo first; (sleep 0.3; echo late) & exit 0'], logFile });
    p.start();
    expect(await p.exited()).toBe(0);
    await new Promise((r) => setTimeout(r, 800));
    expect(readFileSync(logFile, 'utf8')).toBe('first\nlate\n');
    expect(p.recentOutput()).toBe('first\nlate');
  });
});
