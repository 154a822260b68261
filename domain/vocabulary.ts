/**
 * Foghorn's core vocabulary: what a signal can be, how severe, which kinds of resources it
 * names, and which runbook category answers it. Incidents, runbooks, alerts, risk scoring and
 * the analyzer all speak it.
 */

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const RUNBOOK_CATEGORIES = ['oomkill', 'crashloop', 'latency', 'scaling', 'disk', 'network', 'custom'] as const;
export type RunbookCategory = (typeof RUNBOOK_CATEGORIES)[number];

export const SIGNAL_TYPES = [
  'OOMKilled',
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'PodNotReady',
  'DeploymentFailing',
  'HighLatency',
  'HighErrorRate',
  'HighCPU',
  'HighMemory',
  'DiskPressure',
  'NetworkUnavailable',
  'Custom',
] as const;
export type SignalType = (typeof SIGNAL_TYPES)[number];

// A Record (not a switch) so adding a signal type without a category is a compile error.
const SIGNAL_CATEGORY: Readonly<Record<SignalType, RunbookCategory>> = {
  OOMKilled: 'oomkill',
  HighMemory: 'oomkill',
  CrashLoopBackOff: 'crashloop',
  PodNotReady: 'crashloop',
  DeploymentFailing: 'crashloop',
  HighLatency: 'latency',
  HighErrorRate: 'latency',
  HighCPU: 'scaling',
  DiskPressure: 'disk',
  NetworkUnavailable: 'network',
  // No dedicated category: image pulls are usually a bad release (see imagepull-rollback).
  ImagePullBackOff: 'custom',
  Custom: 'custom',
};

/** The runbook category an incident signal is matched against. */
export function categoryForSignal(signal: SignalType): RunbookCategory {
  return SIGNAL_CATEGORY[signal];
}

export const RESOURCE_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Pod', 'Node'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];
