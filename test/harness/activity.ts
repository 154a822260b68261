import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';

/** Activities' log lines are not what these tests look at. */
const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Runs one activity function in a fresh mock activity context (heartbeats, cancellation signal). */
export function runActivity<I, R>(fn: (input: I) => Promise<R>, input: I): Promise<R> {
  return new MockActivityEnvironment({}, { logger: quiet }).run(fn, input) as Promise<R>;
}

/** `run('kubeScaleDeployment', input)` over a set of activities, typed by name. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any activity set
export function activityRunner<A extends Record<string, (input: any) => Promise<unknown>>>(activities: A) {
  return <K extends keyof A>(name: K, input: Parameters<A[K]>[0]): ReturnType<A[K]> =>
    runActivity(activities[name] as (i: typeof input) => Promise<unknown>, input) as ReturnType<A[K]>;
}
