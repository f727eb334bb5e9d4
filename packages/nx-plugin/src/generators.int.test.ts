import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { validateBundle } from '@opkit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { applyEdit, guideSteps } from './testing/guide.js';
import { shell, vitestResults } from './testing/shell.js';
import { copyWorkspace } from './testing/workspace-copy.js';

const root = join(import.meta.dirname, '../../..');
const copies: string[] = [];

/** A copy of the workspace as it was before `operator` was generated (if it was: the guide's readers generate webapp here). */
function freshCopy(operator: string): string {
  const ws = mkdtempSync(join(tmpdir(), 'opkit-generate-'));
  copies.push(ws);
  copyWorkspace(root, ws, { without: [operator] });
  return ws;
}

// Each test generates into its own copy of this workspace (its files as they are now, node_modules
// shared) and runs there what a user runs: the generators, then lint, typecheck, unit and
// integration tests and the local e2e suite of what they made, with nx.
describe('the nx plugin in a copy of the workspace', () => {
  afterAll(() => {
    for (const ws of copies) rmSync(ws, { recursive: true, force: true });
  });

  it('docs/runtime.md §8, as written: the generated operator passes as generated, and the WebApp built from it passes', async () => {
    const ws = freshCopy('webapp');
    const steps = guideSteps(readFileSync(join(root, 'docs/runtime.md'), 'utf8'), '8. ');
    // The guide runs the generators, the targets as generated, edits, then the targets again.
    expect(steps.filter((s) => s.type === 'run').map((s) => (s as { command: string }).command.split(' ').slice(0, 3).join(' '))).toEqual([
      'npx nx g',
      'npx nx g',
      'OPKIT_E2E_MODE=local npx nx',
      'npx nx run',
      'OPKIT_E2E_MODE=local npx nx',
    ]);
    let ranAsGenerated = false;
    for (const step of steps) {
      if (step.type === 'run') {
        await shell(ws, step.command);
        if (step.command.includes('run-many') && !ranAsGenerated) {
          ranAsGenerated = true;
          expect(Object.values(vitestResults(ws, 'e2e/webapp-operator-e2e'))).toContain('passed');
          expect(vitestResults(ws, 'apps/webapp-operator')['the WebApp controller makes a new WebApp Ready for the generation it saw']).toBe('passed');
        }
      } else {
        const path = join(ws, step.path);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, step.type === 'file' ? step.content : applyEdit(readFileSync(path, 'utf8'), step.lines, step.path));
      }
    }
    // The last run was the WebApp's own tests, not the skeleton's.
    const app = vitestResults(ws, 'apps/webapp-operator');
    expect(app['the WebApp controller is deleted with what it made: the Deployment and the Service go with it']).toBe('passed');
    expect(app['computeWebAppStatus every pod available']).toBe('passed');
    expect(vitestResults(ws, 'e2e/webapp-operator-e2e')['webapp operator with helm, local mode runs every example: each one is Ready for its generation']).toBe(
      'passed',
    );
    expect(readFileSync(join(ws, 'charts/webapp-operator/templates/crds/apps.opkit.dev_webapps.yaml'), 'utf8')).toContain('nodePort:');
    expect(readFileSync(join(ws, 'charts/webapp-operator/templates/_rules.tpl'), 'utf8')).toContain('deployments');
    // It ships to OperatorHub too: its OLM bundle passes operator-framework's validators, warnings included.
    await shell(ws, 'npx nx run @opkit/webapp-operator:bundle');
    expect(await validateBundle(join(ws, 'apps/webapp-operator/bundle'))).toEqual([]);
  });

  it('webhooks (validating, mutating, conversion), a cluster-scoped kind with the scale subresource: as generated, they pass', async () => {
    const ws = freshCopy('shop');
    for (const command of [
      'npx nx g @opkit/nx-plugin:operator shop --description "Runs shops: a store\'s stock keeper"',
      'npx nx g @opkit/nx-plugin:api shop --group shop.example.com --kind Store --no-namespaced --scale',
      'npx nx g @opkit/nx-plugin:webhook shop --kind Store --validating --mutating',
      'npx nx g @opkit/nx-plugin:api shop --api-version shop.example.com/v1 --kind Store --no-namespaced --scale',
      'npx nx g @opkit/nx-plugin:webhook shop --kind Store --conversion',
      'npx nx sync:check',
      // As npm test checks the workspace: the generators format what they write.
      'npx prettier --check apps/shop-operator e2e/shop-operator-e2e',
      'OPKIT_E2E_MODE=local npx nx run-many -t lint typecheck test e2e -p @opkit/shop-operator @opkit/shop-operator-e2e',
    ]) {
      await shell(ws, command);
    }
    const app = vitestResults(ws, 'apps/shop-operator');
    expect(Object.entries(app).filter(([, status]) => status !== 'passed')).toEqual([]);
    for (const suite of [
      'the Store validating webhook',
      'the Store mutating webhook',
      'the Store conversion webhook',
      'the Store controller',
      'charts/shop-operator',
    ]) {
      expect(
        Object.keys(app).some((t) => t.startsWith(suite)),
        suite,
      ).toBe(true);
    }
    const e2e = vitestResults(ws, 'e2e/shop-operator-e2e');
    expect(e2e['shop operator with helm, local mode runs every example: each one is Ready for its generation']).toBe('passed');
  });
});
