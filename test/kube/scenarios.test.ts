import type { WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { clusterWatchWorkflowId } from '../../domain/cluster';
import { clusterWatchWorkflow } from '../../workflows/cluster-watch';
import { useKube, type KubeCluster } from '../harness/kube';
import { useNotificationReceiver } from '../harness/notification-receiver';
import { useStack } from '../harness/stack';
import {
  prepareWorld,
  resultTable,
  runScenario,
  SCENARIO_ENV,
  scenarioHookSecret,
  SCENARIOS,
  shutDown,
  type ScenarioResult,
  type ScenarioWorld,
} from './remediation-scenarios';

/**
 * Remediation scenarios end to end (test/kube/remediation-scenarios.ts): a real kube-apiserver
 * with KWOK nodes, the cluster watcher and the whole stack in real time. Ten failures, each in its
 * own namespace and all at once on one stack: bad deploys (one, two in a row, an image typo, with
 * minReadySeconds), a lowered memory limit, a crash with no change that a restart clears and one
 * it does not, a changed ConfigMap, a node going NotReady, and an approval nobody gives. Each is
 * followed from detection to its end: the plan the evidence calls for, the approval a person gives
 * with the role it needs, the step, verification, Resolved by `system` or Escalated with the reason
 * and level 1 paged; the Deployment's final template; and no template seen failing written back.
 */

jest.setTimeout(900_000);

let kube: KubeCluster;
let stack: Awaited<ReturnType<typeof useStack>>;
let receiver: Awaited<ReturnType<typeof useNotificationReceiver>>;
let watch: WorkflowHandle;
let dir: string;
const savedKubeconfig = process.env.KUBECONFIG;
/** Each scenario's run, started together in beforeAll and awaited by its own test. */
const runs = new Map<number, Promise<ScenarioResult>>();
const results: ScenarioResult[] = [];
/** `SCENARIO_IDS=4,8`: only those (to look at one closely; `SCENARIO_STORIES=1` prints each timeline); default all. */
const chosen = SCENARIOS.filter(
  (s) => !process.env.SCENARIO_IDS || process.env.SCENARIO_IDS.split(',').includes(String(s.id)),
);

beforeAll(async () => {
  receiver = await useNotificationReceiver();
  kube = await useKube();
  dir = mkdtempSync(path.join(tmpdir(), 'foghorn-scenarios-'));
  writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
  process.env.KUBECONFIG = path.join(dir, 'kubeconfig');
  stack = await useStack({ realTime: true, env: { ...SCENARIO_ENV } });
  watch = await stack.client.workflow.start(clusterWatchWorkflow, {
    taskQueue: stack.wf.taskQueue,
    workflowId: clusterWatchWorkflowId('local'),
    args: [{ cluster: 'local' }],
  });
  const world: ScenarioWorld = {
    kube,
    call: stack.call,
    tokens: stack.tokens,
    received: receiver.requests,
    hook: { url: receiver.url('/hooks/level-1'), secret: scenarioHookSecret },
  };
  await prepareWorld(world);
  for (const s of chosen) runs.set(s.id, runScenario(world, s));
}, 300_000);

afterAll(async () => {
  if (results.length > 0) console.log(resultTable(results.sort((a, b) => a.scenario.id - b.scenario.id)));
  await watch?.cancel().catch(() => undefined);
  await shutDown(stack);
  await shutDown(kube);
  await shutDown(receiver);
  if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = savedKubeconfig;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(chosen.map((s) => [s.id, s.title, s] as const))('scenario %i: %s', (id, _title, scenario) => {
  const title = `ends ${scenario.end}${scenario.rightStep ? ` after ${scenario.rightStep}` : ''}, with the right template`;
  it(title, async () => {
    const result = await runs.get(id)!;
    results.push(result);
    if (process.env.SCENARIO_STORIES || result.problems.length > 0)
      console.log(
        `scenario ${id} ${result.incident}:\n${result.problems.map((p) => `problem: ${p}`).join('\n')}\n${result.story.join('\n')}`,
      );
    expect(result.problems).toEqual([]);
    expect(result.metrics.rightTemplate).toBe(true);
  });
});
