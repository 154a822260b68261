import { readdirSync, readFileSync } from 'fs';
import path from 'path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { WORKFLOW_REPLAY_OPTIONS } from '../../worker/workflow-bundle';
import { BASELINE } from '../../workflows/baseline';

/**
 * Workflows in flight must survive upgrades: every history recorded on the baseline or later
 * (test/replay/histories, made by record.ts and record-chat.ts) replays on today's workflow code
 * without a nondeterminism error. A change that alters a workflow's commands ships behind
 * `patched()` (docs/design.md, "Versioning and upgrades"); this test is what catches one that
 * forgot. A history from before the baseline (test/replay/before-baseline) is refused with a
 * message that names the way out.
 */
type History = temporal.api.history.v1.IHistory;
const read = (dir: string): { name: string; history: History }[] =>
  readdirSync(path.join(__dirname, dir))
    .filter((f) => f.endsWith('.pb'))
    .map((f) => ({
      name: f.replace(/\.pb$/, ''),
      history: temporal.api.history.v1.History.decode(readFileSync(path.join(__dirname, dir, f))),
    }));
const histories = read('histories');
const typeOf = (h: History) => h.events![0].workflowExecutionStartedEventAttributes!.workflowType!.name!;
/** The patches a run recorded (`patched()` markers), in order. */
const patchIds = (h: History) =>
  h.events!.flatMap((e) => {
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString()) as { id: string }).id] : [];
  });

async function replay(list: { name: string; history: History }[]): Promise<Map<string, Error | undefined>> {
  const results = new Map<string, Error | undefined>();
  for await (const result of Worker.runReplayHistories(
    { ...WORKFLOW_REPLAY_OPTIONS, replayName: 'foghorn-replay' },
    list.map(({ name, history }) => ({ workflowId: name, history })),
  ))
    results.set(result.workflowId, result.error);
  return results;
}

describe('replay of recorded histories', () => {
  // Every long-lived type. The reconciler's runs last seconds and the schedule starts a fresh one
  // every minute, so none is in flight across an upgrade.
  it('has histories of every long-lived workflow type', () => {
    expect([...new Set(histories.map(({ history }) => typeOf(history)))].sort()).toEqual([
      'agentTurnWorkflow',
      'approvalWorkflow',
      'auditExportWorkflow',
      'chatWorkflow',
      'clusterHealthWorkflow',
      'clusterWatchWorkflow',
      'escalationWorkflow',
      'incidentWorkflow',
    ]);
  });

  it('has the incident in each phase a worker may meet it in', () => {
    const names = histories.map(({ name }) => name.replace(/^v[\d.]+-/, ''));
    expect(names).toEqual(
      expect.arrayContaining([
        'incident-resolved', // resolved by a person, closed with its postmortem
        'incident-escalated-running', // waiting for a person, no ladder
        'incident-escalated-ladder-running', // the ladder paging
        'incident-remediated', // a plan verified, resolved by system
        'incident-remediating-running', // a plan waiting for its approval
        'approval-pending',
        'escalation-running',
        'escalation-completed',
        'chat-running', // one message per signal
        'chat-batched-running', // a batch per signal
        'incident-kube-verifying-running', // a Kubernetes fix verifying (v1.0: signals could fail it)
        'incident-kube-rolled-back', // a Kubernetes fix that failed (v1.0: undone; v1.1: left in place)
        'incident-budget-ladder-running', // the budget paged L1 while the plan runs
      ]),
    );
  });

  it('has every run record the baseline first and no patch before it', () => {
    for (const { name, history } of histories) expect([name, patchIds(history)[0]]).toEqual([name, BASELINE]);
  });

  it('replays every history on the current workflow code', async () => {
    const failures = [...(await replay(histories))].filter(([, error]) => error).map(([n, e]) => `${n}: ${e!.message}`);
    expect(failures).toEqual([]);
  }, 120_000);

  it('refuses a history from before the baseline, naming the way out', async () => {
    const before = read('before-baseline');
    expect(before.length).toBeGreaterThan(0);
    const results = await replay(before);
    for (const { name } of before) {
      const error = results.get(name);
      expect(error?.message ?? error?.cause).toBeDefined();
      const text = `${error!.message} ${String((error as Error & { cause?: unknown }).cause ?? '')}`;
      expect(text).toMatch(new RegExp(`started by a Foghorn release before ${BASELINE.replace('.', '\\.')}`));
      expect(text).toMatch(/terminate/);
    }
  }, 120_000);
});
