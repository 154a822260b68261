import { crashSuite } from './crash-suite';

crashSuite('crash safety under kill -9: Temporal, and the worker alone (e2e)', [
  ['temporal', 'only the embedded Temporal server'],
  ['worker', 'only the worker, next to a separate API and gateway'],
]);
