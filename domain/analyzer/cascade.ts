import type { SignalType } from '../vocabulary';
import type { AnalysisContext } from './types';

/** How this incident relates to its neighbours: which came first, and how far the trouble reaches. */

// cause → effects it commonly produces, for the cascade analysis.
const LEADS_TO: Readonly<Partial<Record<SignalType, readonly SignalType[]>>> = {
  OOMKilled: ['CrashLoopBackOff', 'PodNotReady', 'HighErrorRate', 'HighLatency', 'DeploymentFailing'],
  HighMemory: ['OOMKilled'],
  CrashLoopBackOff: ['PodNotReady', 'DeploymentFailing', 'HighErrorRate'],
  ImagePullBackOff: ['DeploymentFailing', 'PodNotReady'],
  PodNotReady: ['HighErrorRate', 'HighLatency', 'DeploymentFailing'],
  DeploymentFailing: ['PodNotReady'],
  HighCPU: ['HighLatency', 'HighErrorRate'],
  HighLatency: ['HighErrorRate'],
  DiskPressure: ['PodNotReady', 'CrashLoopBackOff'],
  NetworkUnavailable: ['PodNotReady', 'HighErrorRate', 'HighLatency', 'CrashLoopBackOff'],
};

const leadsTo = (cause: SignalType, effect: SignalType): boolean => LEADS_TO[cause]?.includes(effect) ?? false;

/** "3m", "45s", "1h5m" for a millisecond distance. */
function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ''}`;
}

function relativeTo(at: Date, ref: Date): string {
  const d = at.getTime() - ref.getTime();
  if (Number.isNaN(d)) return 'time unknown';
  if (Math.abs(d) < 1000) return 'same time';
  return `${span(d)} ${d < 0 ? 'before' : 'after'}`;
}

export function cascadeAnalysis(ctx: AnalysisContext): string {
  const { incident } = ctx;
  const related = ctx.related ?? [];
  if (related.length === 0) return '';
  const list = related
    .map((r) => `${r.name} (${r.resource}, ${r.signalType}, ${relativeTo(r.detectedAt, incident.detectedAt)})`)
    .join(', ');
  const parts = [
    `${related.length} other open incident${related.length === 1 ? '' : 's'} in namespace ${incident.namespace}: ${list}.`,
  ];

  const self = {
    name: incident.name,
    resource: incident.resource,
    signalType: incident.signalType,
    at: incident.detectedAt,
  };
  const all = [
    self,
    ...related.map((r) => ({ name: r.name, resource: r.resource, signalType: r.signalType, at: r.detectedAt })),
  ];
  const timed = all.filter((e) => !Number.isNaN(e.at.getTime()));
  const first = timed.reduce<(typeof all)[number] | undefined>(
    (a, e) => (a === undefined || e.at.getTime() < a.at.getTime() ? e : a),
    undefined,
  );
  if (first !== undefined) {
    if (first === self) {
      const effects = related.filter((r) => leadsTo(incident.signalType, r.signalType));
      parts.push(
        `This incident was detected first, so ${incident.resource} is the likely origin` +
          (effects.length > 0
            ? `; ${incident.signalType} commonly leads to ${[...new Set(effects.map((r) => r.signalType))].join(' and ')}, as seen in ${effects.map((r) => r.name).join(', ')}.`
            : '.'),
      );
    } else {
      const causal = leadsTo(first.signalType, incident.signalType);
      parts.push(
        `${first.name} on ${first.resource} (${first.signalType}) came first and is the likely origin` +
          (causal
            ? `; ${first.signalType} commonly leads to ${incident.signalType}, so this incident is probably a downstream effect.`
            : '; check whether this incident depends on it.'),
      );
    }
  }
  return parts.join(' ');
}

export function blastRadius(ctx: AnalysisContext): string {
  const { incident } = ctx;
  const related = ctx.related ?? [];
  const correlated = incident.correlatedSignals ?? [];
  const parts: string[] = [];
  if (related.length > 0) {
    const resources = [...new Set([incident.resource, ...related.map((r) => r.resource)])];
    parts.push(
      `${resources.length} resource${resources.length === 1 ? '' : 's'} in namespace ${incident.namespace} currently ${resources.length === 1 ? 'has' : 'have'} open incidents (${resources.join(', ')}); the problem is not confined to ${incident.resource}.`,
    );
  }
  if (correlated.length > 0) {
    const types = [...new Set(correlated.map((s) => s.signalType))];
    parts.push(
      `${correlated.length} further signal${correlated.length === 1 ? '' : 's'} joined this incident (${types.join(', ')}), so ${incident.resource} shows more than one symptom.`,
    );
  }
  if (parts.length > 0) parts.push(`Risk score ${incident.riskScore}/100.`);
  return parts.join(' ');
}
