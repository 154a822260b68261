import { categoryForSignal, type SignalType } from '../vocabulary';
import { blastRadius, cascadeAnalysis } from './cascade';
import { factsOf } from './facts';
import type { Rule } from './rule';
import { CUSTOM_RULES } from './rules-custom';
import { NODE_RULES } from './rules-node';
import { SERVICE_RULES } from './rules-service';
import { WORKLOAD_RULES } from './rules-workload';
import type { AnalysisContext, Insight, SuggestedAction } from './types';
import { evidenceRecommendations, gitOpsContextOf, logAnalysisOf } from '../evidence-analysis';

/**
 * The built-in rules analyzer (DESIGN §7): provider `builtin`, model `rules-v1`. The default
 * insight provider and the fallback when the LLM fails, so it has to stand on its own: per
 * signal type a root cause naming the resource, a calibrated confidence, the checks and fixes an
 * SRE would reach for, and suggested actions built to validate against the runbook action
 * schemas (they can become a generated runbook, DESIGN §8): the unit tests parse every one, and
 * the activity keeps only those that do (contracts/remediation.ts isRunbookStep).
 *
 * It only reasons over what the caller hands it: the signal and, for a workload on a registered
 * cluster, the evidence (domain/evidence-analysis.ts). The evidence's recommendations come first
 * and cite their items; the signal type's generic checks follow, marked as resting on the signal
 * alone. Without evidence, `gitOpsContext` says why and `logAnalysis` stays empty: never invent data.
 */

export { scaleQuantity } from './actions';
export { RULES_PROVIDER, type AnalysisContext, type Insight, type SuggestedAction } from './types';

// A Record over every signal type: a new signal type without a rule does not compile.
const RULES: Readonly<Record<SignalType, Rule>> = {
  ...WORKLOAD_RULES,
  ...SERVICE_RULES,
  ...NODE_RULES,
  ...CUSTOM_RULES,
};

const EVIDENCE_BONUS = 0.05;
const EVIDENCE_BONUS_MAX = 0.15;
const NO_DESCRIPTION_PENALTY = 0.1;

function calibrate(base: number, evidence: number, hasDescription: boolean): number {
  let c = base + Math.min(EVIDENCE_BONUS_MAX, evidence * EVIDENCE_BONUS);
  if (!hasDescription) c -= NO_DESCRIPTION_PENALTY;
  c = Math.min(0.95, Math.max(0.05, c));
  return Math.round(c * 100) / 100;
}

/** A runbook pointer, saying what it rests on: the runbook's category against the signal's. */
function runbookRecommendation(ctx: AnalysisContext): string | undefined {
  const text = runbookPointer(ctx);
  return text && `${text.replace(/\.$/, '')} (rests on the ${categoryForSignal(ctx.incident.signalType)} category).`;
}

function runbookPointer(ctx: AnalysisContext): string | undefined {
  const runbooks = ctx.runbooks ?? [];
  if (runbooks.length === 0) return undefined;
  const category = categoryForSignal(ctx.incident.signalType);
  const ordered = [
    ...runbooks.filter((r) => r.category === category),
    ...runbooks.filter((r) => r.category !== category),
  ];
  const [first] = ordered;
  const sentence = first.description.split(/(?<=\.)\s/)[0]?.trim() ?? '';
  if (ordered.length === 1)
    return first.category === category
      ? `Runbook ${first.name} covers this case${sentence ? `: ${sentence}` : '.'}`
      : `Candidate runbook ${first.name} (category ${first.category})${sentence ? `: ${sentence}` : '.'}`;
  const names = ordered.slice(0, 3).map((r) => r.name);
  return `Matching runbooks: ${names.join(', ')}${ordered.length > 3 ? ` and ${ordered.length - 3} more` : ''}; ${first.name} fits best${sentence ? ` (${sentence})` : ''}.`;
}

/** Each action once: rules for several findings may suggest the same step. */
function distinctActions(actions: SuggestedAction[]): SuggestedAction[] {
  const seen = new Set<string>();
  return actions.filter((a) => {
    const key = `${a.action}:${JSON.stringify(a.params)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The built-in rules analysis of one incident. Pure and deterministic. */
export function analyzeWithRules(ctx: AnalysisContext): Insight {
  const { incident } = ctx;
  const f = factsOf(ctx);
  const rule = RULES[incident.signalType] ?? RULES.Custom;
  const result = rule.run(f, incident.name);
  const confidence = calibrate(
    rule.base + (ctx.evidence?.suspect ? 0.1 : 0),
    result.evidence.length + (ctx.evidence?.items.length ?? 0),
    f.description !== '',
  );

  const runbook = runbookRecommendation(ctx);
  const evidence = ctx.evidence;
  const grounded = evidence ? evidenceRecommendations(evidence, incident.resource).slice(0, 3) : [];
  const generic = result.recommendations.map(
    (r) => `${r.replace(/\.$/, '')} (rests on the ${incident.signalType} signal alone).`,
  );
  const room = Math.max(1, (runbook ? 5 : 6) - grounded.length);
  const recommendations = [...grounded, ...generic.slice(0, room), ...(runbook ? [runbook] : [])];
  const suspect = evidence?.suspect;
  const rootCause =
    suspect && suspect.confidence >= 0.6
      ? `${result.rootCause} Likely introduced by ${suspect.summary} (evidence ${suspect.evidence}).`
      : result.rootCause;

  const cascade = cascadeAnalysis(ctx);
  const correlated = incident.correlatedSignals ?? [];
  const related = ctx.related ?? [];

  const analysis = [
    `${incident.resource} in namespace ${incident.namespace} reports ${incident.signalType} ` +
      `(severity ${incident.severity ?? 'unrated'}, risk ${incident.riskScore}/100).`,
    f.description !== '' ? `Source description: "${f.description}".` : 'The source gave no description.',
    rootCause,
    result.evidence.length > 0 ? `Supporting evidence: ${result.evidence.join('; ')}.` : '',
    evidence ? gitOpsContextOf(evidence, incident.resource) : '',
    correlated.length > 0
      ? `${correlated.length} correlated signal${correlated.length === 1 ? '' : 's'}: ${correlated.map((s) => s.signalType).join(', ')}.`
      : '',
    related.length > 0
      ? `${related.length} related open incident${related.length === 1 ? '' : 's'} in the namespace (see cascade analysis).`
      : '',
    `Confidence ${Math.round(confidence * 100)}%.`,
  ]
    .filter((s) => s !== '')
    .join(' ');

  return {
    analysis,
    confidence,
    recommendations,
    suggestedActions: distinctActions(result.actions),
    logAnalysis: evidence ? logAnalysisOf(evidence) : '',
    gitOpsContext: evidence
      ? gitOpsContextOf(evidence, incident.resource)
      : ctx.evidenceGap
        ? `No cluster evidence: ${ctx.evidenceGap}.`
        : '',
    cascadeAnalysis: cascade,
    blastRadiusPrediction: blastRadius(ctx),
    rootCause,
    recommendation: recommendations[0] ?? '',
    relatedEvents: [
      ...related.map((r) => r.name),
      ...correlated.map((s) =>
        s.description.trim() !== ''
          ? s.description.trim()
          : `${s.signalType} signal${Number.isNaN(s.at.getTime()) ? '' : ` at ${s.at.toISOString()}`}`,
      ),
    ],
  };
}
