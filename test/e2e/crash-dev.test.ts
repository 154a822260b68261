import { crashSuite } from './crash-suite';

crashSuite('crash safety under kill -9: foghorn dev and its MongoDB (e2e)', [
  ['dev', 'the whole foghorn dev'],
  ['mongo', 'only the embedded MongoDB-wire server'],
]);
