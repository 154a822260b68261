/**
 * Records workflow histories for the replay test (test/replay/replay.test.ts). Run it with the
 * code of the release whose in-flight workflows must keep working, before changing a workflow:
 *
 *   npx ts-node --transpile-only test/replay/record.ts [label] [workflows] [clusters] [kube]
 *
 * It drives real workflows through the API and the chat gateway on the time-skipping test
 * server, then writes each history (binary protobuf) to test/replay/histories/<label>-<name>.pb.
 * Running workflows are recorded as they stand: a partial history is what a worker replays
 * after an upgrade.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { writeFile } from 'fs/promises';
import http from 'http';
import type { AddressInfo } from 'net';
import { tmpdir } from 'os';
import path from 'path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { AppsV1Api } from '@kubernetes/client-node';
import { runbookSpecSchema } from '../../contracts/runbooks';
import { createRunbook, deleteRunbook } from '../../store/runbooks';
import { seedAuditChain } from '../fixtures/audit-chain';
import { chatWorkflowId } from '../../workflows/chat-messages';
import { useTestSecretKey } from '../clusters/fixtures';
import { useGateway } from '../harness/gateway';
import { markRevision } from '../fixtures/revisions';
import { deploymentManifest, useKube, waitFor } from '../harness/kube';

const OUT = path.join(__dirname, 'histories');

async function save(client: Client, label: string, workflowId: string, as: string): Promise<void> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  // Binary protobuf: the SDK's JSON helpers trip over its nested protobufjs copies.
  await writeFile(path.join(OUT, `${label}-${as}.pb`), temporal.api.history.v1.History.encode(history).finish());
  console.log(`recorded ${as} (${history.events?.length} events)`);
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      () => false,
    );
}

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'v1';
  /** What to record: `workflows` (every type but the cluster ones), `clusters` and `kube` (need the Kubernetes control plane); all by default. */
  const parts = new Set(process.argv.length > 3 ? process.argv.slice(3) : ['workflows', 'clusters', 'kube']);
  const gw = await useGateway();
  try {
    const get = (p: string) => gw.call('GET', p, { token: gw.tokens.viewer });
    const untilState = (name: string, state: string) =>
      gw.eventually(
        () => get(`/incidents/${name}`),
        (r) => r.body.status?.state === state,
        60_000,
      );
    const open = async (resource: string) => {
      const res = await gw.call('POST', '/incidents', {
        token: gw.tokens.operator,
        body: { resource, namespace: 'shop', signalType: 'OOMKilled', severity: 'high', description: 'OOMKilled' },
      });
      return res.body.metadata.name as string;
    };
    const act = (name: string, verb: string, body: object) =>
      gw.call('POST', `/incidents/${name}/${verb}?namespace=shop`, { token: gw.tokens.operator, body });

    if (parts.has('workflows')) {
      // 1. A whole life: escalated, correlated signal, acknowledged, snoozed, resolved, postmortem.
      const done = await open('Deployment/checkout');
      await untilState(done, 'Escalated');
      await gw.call('POST', '/incidents', {
        token: gw.tokens.operator,
        body: { resource: 'Deployment/checkout', namespace: 'shop', signalType: 'HighMemory', description: 'again' },
      });
      await act(done, 'acknowledge', { acknowledgedBy: 'alice', message: 'on it' });
      await act(done, 'snooze', { duration: '30m', reason: 'deploy', snoozedBy: 'alice' });
      await act(done, 'resolve', { resolution: 'raised the limit' });
      await gw.eventually(
        () => get(`/postmortems?incident=${done}`),
        (r) => r.body.metadata?.totalCount === 1,
        60_000,
      );
      await gw.client.workflow.getHandle(done).result();
      await save(gw.client, label, done, 'incident-resolved');
      // Releases before v0.9 wrote the postmortem in a child workflow; later ones in the incident's run.
      if (await exists(gw.client, `${done}-postmortem`))
        await save(gw.client, label, `${done}-postmortem`, 'postmortem');

      // 2. In flight: escalated and waiting for a person, with an acknowledge.
      const waiting = await open('Deployment/cart');
      await untilState(waiting, 'Escalated');
      await act(waiting, 'acknowledge', { acknowledgedBy: 'bob' });
      await save(gw.client, label, waiting, 'incident-escalated-running');

      // 3. A chat with two turns, still running (waiting for the next message).
      const chatId = 'replay-chat';
      for (const text of ['/help', '/incidents']) {
        const id = await gw.send({ chat_id: chatId, user_id: 'alice', text });
        await gw.reply(id, 60_000);
        // Polled, not awaited with result(): that lets the test server skip time, and the chat's
        // idle timer would end the chat between the two messages.
        await gw.eventually(
          async () => (await gw.client.workflow.getHandle(id).describe()).status.name,
          (status) => status === 'COMPLETED',
          60_000,
        );
        if (text === '/incidents') await save(gw.client, label, id, 'agent-turn');
      }
      await gw.eventually(
        () => gw.client.workflow.getHandle(chatWorkflowId(chatId)).fetchHistory(),
        (h) => (h.events ?? []).filter((e) => e.childWorkflowExecutionCompletedEventAttributes).length === 2,
        60_000,
      );
      await save(gw.client, label, chatWorkflowId(chatId), 'chat-running');

      // 5. Remediation (v0.4 on): a runbook's HTTP step fixes one incident (incident, plan and
      //    postmortem complete); another incident's plan waits for an approval (running).
      const receiver = http.createServer((_req, res) => res.end('ok'));
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      try {
        for (const [name, category, approvalRequired] of [
          ['replay-http-fix', 'custom', false],
          ['replay-http-approval', 'latency', true],
        ] as const)
          await createRunbook(
            runbookSpecSchema.parse({
              name,
              category,
              description: 'replay recording',
              version: '1.0.0',
              automated: true,
              approvalRequired,
              severity: ['high'],
              steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${url}/{{deployment}}` } }],
            }),
          );
        const remediate = async (resource: string, signalType: string) => {
          const res = await gw.call('POST', '/incidents', {
            token: gw.tokens.operator,
            body: { resource, namespace: 'shop', signalType, severity: 'high', description: 'replay' },
          });
          return res.body.metadata.name as string;
        };
        const fixed = await remediate('Deployment/search', 'Custom');
        for (let i = 0; i < 60 && (await get(`/incidents/${fixed}`)).body.status.state !== 'Resolved'; i++)
          await gw.wf.env.sleep(30_000); // the verification window is a durable timer
        await gw.client.workflow.getHandle(fixed).result();
        const [plan] = (await get(`/remediations?incident=${fixed}`)).body.items;
        await save(gw.client, label, fixed, 'incident-remediated');
        // The plan runs in the incident's workflow: no history of its own.
        if (await exists(gw.client, plan.name)) await save(gw.client, label, plan.name, 'remediation-completed');

        const waiting = await remediate('Deployment/feed', 'HighLatency');
        const pending = await gw.eventually(
          () => get(`/approvals?incident=${waiting}&status=pending`),
          (r) => r.body.items?.length === 1,
          60_000,
        );
        const approval = pending.body.items[0];
        await gw.eventually(
          // (The record is written before its workflow starts: not found yet is "not yet".)
          async () =>
            (
              await gw.client.workflow
                .getHandle(approval.name)
                .fetchHistory()
                .catch(() => undefined)
            )?.events ?? [],
          (events) => events.some((e) => e.timerStartedEventAttributes),
          60_000,
        );
        // An operator and the alert source act while the plan waits (v0.20 on): their handlers run
        // beside the plan's local activities.
        await act(waiting, 'acknowledge', { acknowledgedBy: 'alice', message: 'watching' });
        await gw.call('POST', '/incidents', {
          token: gw.tokens.operator,
          body: { resource: 'Deployment/feed', namespace: 'shop', signalType: 'HighMemory', description: 'again' },
        });
        await gw.eventually(
          () => get(`/incidents/${waiting}`),
          (r) => r.body.status?.correlatedSignals === 1,
          60_000,
        );
        await save(gw.client, label, waiting, 'incident-remediating-running');
        if (await exists(gw.client, approval.plan))
          await save(gw.client, label, approval.plan, 'remediation-awaiting-approval');
        await save(gw.client, label, approval.name, 'approval-pending');

        // 6. Escalation (v0.5 on): a policy's ladder past L2, running; another one resolved.
        const created = await gw.call('POST', '/escalation-policies', {
          token: gw.tokens.admin,
          body: {
            name: 'replay-ladder',
            match: { namespaces: ['ladder'] },
            levels: [
              { targets: [{ channel: 'slack', url: `${url}/slack` }], escalateAfter: '5m' },
              {
                targets: [{ channel: 'webhook', url: `${url}/hook`, secret: 'whsec_cmVwbGF5LXJlY29yZGluZy1zZWNyZXQ=' }],
              },
            ],
            repeat: { every: '30m', times: 2 },
          },
        });
        if (created.status !== 201) throw new Error(`policy: ${created.status} ${JSON.stringify(created.body)}`);
        const escalate = async (resource: string) => {
          const res = await gw.call('POST', '/incidents', {
            token: gw.tokens.operator,
            body: { resource, namespace: 'ladder', signalType: 'HighCPU', severity: 'critical', description: 'replay' }, // kube-only runbooks: skipped
          });
          const name = res.body.metadata.name as string;
          await gw.eventually(
            () => get(`/incidents/${name}`),
            (r) => r.body.status?.state === 'Escalated',
            60_000,
          );
          // The ladder starts just after the incident's move to Escalated: not found yet is "not yet".
          await gw.eventually(
            async () =>
              (
                await gw.client.workflow
                  .getHandle(`${name}-escalation`)
                  .fetchHistory()
                  .catch(() => undefined)
              )?.events ?? [],
            (events) => events.some((e) => e.timerStartedEventAttributes),
            60_000,
          );
          return name;
        };
        const paging = await escalate('Deployment/ledger');
        await gw.wf.env.sleep(5 * 60_000 + 1_000); // L2
        await gw.eventually(
          async () => (await gw.client.workflow.getHandle(`${paging}-escalation`).fetchHistory()).events ?? [],
          (events) => events.filter((e) => e.timerStartedEventAttributes).length >= 2,
          60_000,
        );
        await save(gw.client, label, paging, 'incident-escalated-ladder-running');
        await save(gw.client, label, `${paging}-escalation`, 'escalation-running');
        const closed = await escalate('Deployment/billing');
        await gw.call('POST', `/incidents/${closed}/acknowledge?namespace=ladder`, {
          token: gw.tokens.operator,
          body: { acknowledgedBy: 'alice' },
        });
        await gw.call('POST', `/incidents/${closed}/resolve?namespace=ladder`, { token: gw.tokens.operator, body: {} });
        await gw.client.workflow.getHandle(`${closed}-escalation`).result();
        await save(gw.client, label, `${closed}-escalation`, 'escalation-completed');
      } finally {
        receiver.close();
      }

      // 7. Audit export (v0.6 on): a job that wrote its file and waits for expiry (running),
      //    and one past its expiry (completed).
      // Stamped before the export's `end` (now): records written by workflows carry the skipped clock.
      await seedAuditChain(10_001, {
        start: new Date(Date.now() - 3_600_000),
        entry: (i) => ({ user: 'replay', resource: `r-${i}` }),
      });
      const exportJob = async () => {
        const res = await gw.call('GET', '/audit/export?user=replay', { token: gw.tokens.admin });
        if (res.status !== 202) throw new Error(`export: ${res.status} ${JSON.stringify(res.body)}`);
        const jobId = res.body.metadata.jobId as string;
        await gw.eventually(
          () => gw.call('GET', `/audit/export/download/${jobId}`, { token: gw.tokens.admin }),
          (r) => r.status === 200,
          120_000,
        );
        return jobId;
      };
      const expired = await exportJob();
      await gw.wf.env.sleep('25h');
      await gw.client.workflow.getHandle(expired).result();
      await save(gw.client, label, expired, 'audit-export-expired');
      const kept = await exportJob();
      await save(gw.client, label, kept, 'audit-export-running');
    }

    // 8. The remediation budget (v1.1 on): a critical incident whose HTTP step's target refuses
    //    connections; its budget (10m) ran out, the ladder pages L1 while the plan still runs.
    if (parts.has('budget')) {
      const refusing = http.createServer();
      await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', r));
      const refused = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
      await new Promise((r) => refusing.close(r)); // nobody listens there now
      const created = await gw.call('POST', '/escalation-policies', {
        token: gw.tokens.admin,
        body: {
          name: 'replay-budget',
          match: { namespaces: ['budget'] },
          levels: [{ targets: [{ channel: 'chat', chatId: 'replay-oncall' }] }],
        },
      });
      if (created.status !== 201) throw new Error(`policy: ${created.status} ${JSON.stringify(created.body)}`);
      await createRunbook(
        runbookSpecSchema.parse({
          name: 'replay-budget-refused',
          category: 'custom',
          description: 'replay recording',
          version: '1.0.0',
          automated: true,
          severity: ['critical'],
          steps: [{ type: 'HttpRequest', params: { method: 'POST', url: `${refused}/{{deployment}}` } }],
        }),
      );
      const res = await gw.call('POST', '/incidents', {
        token: gw.tokens.operator,
        body: {
          resource: 'Deployment/pay',
          namespace: 'budget',
          signalType: 'Custom',
          severity: 'critical',
          description: 'replay',
        },
      });
      const name = res.body.metadata.name as string;
      await untilState(name, 'Remediating');
      const ladderStarted = async () =>
        ((await gw.client.workflow.getHandle(name).fetchHistory()).events ?? []).some(
          (e) => e.childWorkflowExecutionStartedEventAttributes,
        );
      for (let i = 0; i < 30 && !(await ladderStarted()); i++) await gw.wf.env.sleep(30_000);
      const state = (await get(`/incidents/${name}`)).body.status?.state;
      if (!(await ladderStarted()) || state !== 'Remediating')
        throw new Error(`budget: ${name} is ${state}, no ladder`);
      await save(gw.client, label, name, 'incident-budget-ladder-running');
    }

    // 4. A registered cluster: its health checks and its watch, running, after the watcher
    //    opened an incident for a crash-looping Deployment.
    if (parts.has('clusters')) {
      useTestSecretKey();
      const kube = await useKube();
      try {
        await kube.addNode('kwok-node-1');
        const registered = await gw.call('POST', '/clusters', {
          token: gw.tokens.admin,
          body: { metadata: { name: 'replay' }, spec: { tier: 'standard', kubeconfig: kube.kubeconfig } },
        });
        if (registered.status !== 201)
          throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
        await gw.eventually(
          () => get('/clusters/replay'),
          (r) => r.body.status?.phase === 'Connected',
          120_000,
        );
        await kube.kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
          namespace: 'default',
          body: deploymentManifest('replay-crash', 2, 'crashloop'),
        });
        await gw.eventually(
          () => get('/incidents?resource=Deployment/replay-crash'),
          (r) => r.body.metadata?.totalCount === 1,
          120_000,
        );
        await save(gw.client, label, 'cluster-health-replay', 'cluster-health-running');
        await save(gw.client, label, 'cluster-watch-replay', 'cluster-watch-running');
      } finally {
        await kube.stop();
      }
    }

    // 8. Kubernetes remediations on the `local` cluster (KUBECONFIG) of a real API server with
    //    KWOK nodes: a plan that restarted and rolled back a Deployment, verifying (running); a
    //    plan whose steps on a crash-looping Deployment were undone, the incident escalated (running).
    if (parts.has('kube')) {
      const kube = await useKube();
      const dir = mkdtempSync(path.join(tmpdir(), 'foghorn-replay-'));
      const savedKubeconfig = process.env.KUBECONFIG;
      try {
        await kube.addNode('kwok-node-1');
        writeFileSync(path.join(dir, 'kubeconfig'), kube.kubeconfig, { mode: 0o600 });
        process.env.KUBECONFIG = path.join(dir, 'kubeconfig'); // read on each use (activities/kube/client.ts)
        const apps = kube.kc.makeApiClient(AppsV1Api);
        const rolledOut = (name: string, revision: string, ready: boolean) =>
          waitFor(`${name} at revision ${revision}`, async () => {
            const d = await apps.readNamespacedDeployment({ name, namespace: 'default' });
            const at = d.metadata?.annotations?.['deployment.kubernetes.io/revision'] === revision;
            return at && (!ready || (d.status?.updatedReplicas === 2 && d.status?.availableReplicas === 2));
          });
        // The workflows part's HTTP runbook is a Custom incident's next strategy too: only ours run here.
        await deleteRunbook('replay-http-fix');
        const runbook = (name: string, verificationWindow: string, steps: object[]) =>
          createRunbook(
            runbookSpecSchema.parse({
              name,
              category: 'custom',
              description: 'replay recording',
              version: '1.0.0',
              automated: true,
              approvalRequired: false,
              severity: ['high'],
              targets: { signalTypes: ['Custom'], resourceKinds: ['Deployment'] },
              steps,
              maxAttempts: 1,
              verificationWindow,
            }),
          );
        const target = { deployment: '{{deployment}}', namespace: '{{namespace}}' };
        const remediate = async (deployment: string) => {
          const res = await gw.call('POST', '/incidents', {
            token: gw.tokens.operator,
            body: {
              resource: `Deployment/${deployment}`,
              namespace: 'default',
              signalType: 'Custom',
              severity: 'high',
              description: 'replay',
            },
          });
          return res.body.metadata.name as string;
        };
        const events = async (id: string) => (await gw.client.workflow.getHandle(id).fetchHistory()).events ?? [];
        const plansOf = async (name: string) => (await get(`/remediations?incident=${name}`)).body.items ?? [];

        // Two revisions first: the rollback has one to go back to whenever the restart's shows up.
        await apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('replay-steady', 2) });
        await rolledOut('replay-steady', '1', true);
        const steady = deploymentManifest('replay-steady', 2);
        steady.spec!.template.spec!.containers[0].image = 'example.com/replay-steady:2';
        await apps.replaceNamespacedDeployment({ name: 'replay-steady', namespace: 'default', body: steady });
        await rolledOut('replay-steady', '2', true);
        // What the cluster watcher would have recorded: a rollback goes only to a revision seen healthy.
        for (const revision of [1, 2])
          await markRevision(
            apps,
            { cluster: 'local', namespace: 'default', deployment: 'replay-steady' },
            revision,
            'Healthy',
          );
        await runbook('replay-kube-restart-rollback', '10m', [
          { type: 'RestartDeployment', params: target },
          { type: 'RollbackDeployment', params: target },
        ]);
        const verifying = await remediate('replay-steady');
        // Healthy again after the steps: the rest of the window is a durable timer.
        await gw.eventually(
          () => events(verifying),
          (list) => {
            const healthy = list.findIndex(
              (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'awaitTargetHealthy',
            );
            return healthy >= 0 && list.slice(healthy).some((e) => e.timerStartedEventAttributes);
          },
          120_000,
        );
        const [plan] = await plansOf(verifying);
        if (plan?.state !== 'Verifying') throw new Error(`plan of ${verifying}: ${JSON.stringify(plan)}`);
        await save(gw.client, label, verifying, 'incident-kube-verifying-running');
        await deleteRunbook('replay-kube-restart-rollback');

        // Pods that crash whatever is done: the verification fails, both steps are undone.
        await apps.createNamespacedDeployment({
          namespace: 'default',
          body: deploymentManifest('replay-crashing', 2, 'crashloop'),
        });
        await rolledOut('replay-crashing', '1', false);
        await runbook('replay-kube-scale-restart', '15s', [
          { type: 'ScaleDeployment', params: { ...target, replicas: 3 } },
          { type: 'RestartDeployment', params: target },
        ]);
        const undone = await remediate('replay-crashing');
        await untilState(undone, 'Escalated');
        const [failed] = await plansOf(undone);
        if (!['RolledBack', 'Failed'].includes(failed?.state))
          throw new Error(`plan of ${undone}: ${JSON.stringify(failed)}`);
        // Saved once the move to Escalated is written and nothing is in flight.
        await gw.eventually(
          async () => ({
            list: await events(undone),
            described: await gw.client.workflow.getHandle(undone).describe(),
          }),
          ({ list, described }) =>
            !!list.at(-1)?.workflowTaskCompletedEventAttributes && (described.raw.pendingActivities ?? []).length === 0,
          60_000,
        );
        await save(gw.client, label, undone, 'incident-kube-rolled-back');
        await deleteRunbook('replay-kube-scale-restart');
      } finally {
        if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
        else process.env.KUBECONFIG = savedKubeconfig;
        rmSync(dir, { recursive: true, force: true });
        await kube.stop();
      }
    }
  } finally {
    await gw.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
