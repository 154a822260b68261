import { analyzeWithLlm } from '../../activities/llm';
import { analyzeWithRules, type AnalysisContext } from '../../domain/analyzer';
import { revisionChange } from '../../domain/change-record';
import type { IncidentEvidence } from '../../domain/evidence';
import { evidenceItems, rankChanges, suspectOf } from '../../domain/evidence-analysis';
import { useLlmServer } from '../harness/llm-server';

/**
 * The LLM gets the same evidence as the rules analyzer (issue 60 §3), over a real HTTP listener:
 * the prompt asks it to cite evidence ids, and the insight's gitOpsContext and logAnalysis are
 * the evidence's own texts whichever provider answers.
 */

const first = new Date('2026-12-07T10:00:00Z');
const tpl = (image: string) => ({ spec: { containers: [{ name: 'app', image }] } });
const change = revisionChange({
  cluster: 'prod',
  namespace: 'shop',
  workload: 'Deployment/checkout',
  revision: 2,
  previousRevision: 1,
  template: tpl('checkout:2'),
  previousTemplate: tpl('checkout:1'),
  at: new Date(first.getTime() - 6_000),
  by: { manager: 'kubectl-client-side-apply', changeCause: 'deploy 2', source: '', foghorn: false },
});
const ranked = rankChanges(
  [change],
  {
    signalType: 'CrashLoopBackOff',
    reasons: ['CrashLoopBackOff', 'Error'],
    failingImages: ['app=checkout:2'],
    firstSignalAt: first,
  },
  [],
);
const partial = {
  collectedAt: first,
  firstSignalAt: first,
  windowMs: 7_200_000,
  ownerChain: ['Pod/checkout-2-x', 'Deployment/checkout'],
  changes: [change],
  revisions: [],
  pods: [
    {
      name: 'checkout-2-x',
      node: 'node-a',
      phase: 'Running',
      restarts: 4,
      waitingReason: 'CrashLoopBackOff',
      lastTermination: { reason: 'Error', exitCode: 1 },
      previousLogs: ['boot', 'panic: missing PAYMENTS_URL'],
      currentLogs: [],
    },
  ],
  events: [],
  nodes: [],
  notes: [],
};
const items = evidenceItems(partial, ranked);
const evidence: IncidentEvidence = { ...partial, items, suspect: suspectOf(ranked, 'E1') };
const ctx: AnalysisContext = {
  incident: {
    name: 'INC-20261207-001',
    namespace: 'shop',
    resource: 'Deployment/checkout',
    signalType: 'CrashLoopBackOff',
    severity: 'high',
    description: 'checkout crash-looping',
    labels: {},
    detectedAt: first,
    riskScore: 60,
    correlatedSignals: [],
  },
  related: [],
  runbooks: [],
  evidence,
};

it('the model gets the evidence and is asked to cite it; the evidence texts are the facts', async () => {
  const llm = await useLlmServer(() => ({
    content: JSON.stringify({
      analysis: 'The crash follows the rollout of revision 2.',
      rootCause: 'checkout:2 panics at start: PAYMENTS_URL is missing.',
      confidence: 0.8,
      recommendations: ['Roll back to revision 1 (evidence E1, E2).'],
      suggestedActions: [],
      cascadeAnalysis: '',
      blastRadiusPrediction: '',
    }),
  }));
  try {
    const insight = await analyzeWithLlm({ baseUrl: llm.baseUrl, apiKey: '', model: 'm' }, ctx);
    const [system, user] = llm.requests[0].body.messages;
    expect(system.content).toContain('(evidence E1, E3)');
    expect(system.content).toContain('Never conclude from events alone');
    const sent = JSON.parse(user.content);
    expect(sent.evidence.items.map((i: { id: string }) => i.id)).toEqual(items.map((i) => i.id));
    expect(sent.evidence.pods[0].previousLogs).toContain('panic: missing PAYMENTS_URL');
    const rules = analyzeWithRules(ctx);
    expect(insight.gitOpsContext).toBe(rules.gitOpsContext);
    expect(insight.logAnalysis).toBe(rules.logAnalysis);
    expect(insight.gitOpsContext).toContain('revision 2 of shop/Deployment/checkout replaced 1');
    expect(insight.logAnalysis).toContain('"panic: missing PAYMENTS_URL"');
    expect(insight.recommendations).toEqual(['Roll back to revision 1 (evidence E1, E2).']);
  } finally {
    await llm.stop();
  }
});
