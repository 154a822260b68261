/*
 * Stacks started by the tests run their worker and Temporal at the API's priority
 * (FOGHORN_BACKGROUND_NICE=0): on a machine loaded by the other suites, workers in the background
 * would yield to those suites' processes rather than to their own API, which is not what the
 * setting is for. The tests of the setting (test/e2e/dev-worker.test.ts,
 * test/e2e/background-priority.test.ts) set it themselves.
 */
process.env.FOGHORN_BACKGROUND_NICE ??= '0';
