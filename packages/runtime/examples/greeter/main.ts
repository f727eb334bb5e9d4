import { Manager, MANAGER_FLAG_HELP } from '@opkit/runtime';
import { greeterController } from './controller.js';

// Standard flags: --kubeconfig, --leader-elect, --metrics-bind-address, --log-format …
const { manager, help } = Manager.fromFlags('greeter');
if (help) {
  console.log(`greeter: says hello\n${MANAGER_FLAG_HELP}`);
  process.exit(0);
}
manager.add(greeterController);
await manager.runUntilSignalled(); // SIGTERM: drain in-flight reconciles, release the lease, exit
