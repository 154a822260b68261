import { splitResource, type Severity, type SignalType } from './incident';
import { categoryForSignal, type RunbookCategory } from './vocabulary';

/** What matching needs to know about a runbook. */
export interface RunbookCandidate {
  name: string;
  category: RunbookCategory;
  severity: readonly Severity[];
  targets: { signalTypes: readonly string[]; resourceKinds: readonly string[] };
}

export interface RunbookMatch {
  runbook: string;
  /** 1: category + severity + resource kind, 2: category + severity, 3: category (DESIGN §8). */
  tier: 1 | 2 | 3;
  /** In [0,1]: the tier's base, plus a little when the runbook names this signal type. */
  matchScore: number;
}

const TIER_BASE = { 1: 0.9, 2: 0.75, 3: 0.55 } as const;
const SIGNAL_BONUS = 0.1;

/** The runbooks that fit an incident, best first (tier, then score, then name). */
export function matchRunbooks(
  incident: { signalType: SignalType; severity: Severity; resource: string },
  runbooks: readonly RunbookCandidate[],
): RunbookMatch[] {
  const category = categoryForSignal(incident.signalType);
  const { kind } = splitResource(incident.resource);
  return runbooks
    .filter((r) => r.category === category)
    .map((r): RunbookMatch => {
      const severityFits = r.severity.includes(incident.severity);
      const kindFits = r.targets.resourceKinds.length === 0 || r.targets.resourceKinds.includes(kind);
      const tier = severityFits && kindFits ? 1 : severityFits ? 2 : 3;
      const bonus = r.targets.signalTypes.includes(incident.signalType) ? SIGNAL_BONUS : 0;
      return { runbook: r.name, tier, matchScore: Math.round((TIER_BASE[tier] + bonus) * 100) / 100 };
    })
    .sort((a, b) => a.tier - b.tier || b.matchScore - a.matchScore || a.runbook.localeCompare(b.runbook));
}
