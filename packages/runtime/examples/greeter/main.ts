import { runOperator } from '@opkit/runtime';
import { greeterController } from './controller.js';

// Standard flags (--kubeconfig, --leader-elect, --metrics-bind-address, --log-format …) and --help;
// runs until SIGTERM, then drains in-flight reconciles and releases the lease.
void runOperator({
  name: 'greeter',
  description: 'says hello (example.opkit.dev/v1 Greeting)',
  setup(manager) {
    manager.add(greeterController);
  },
});
