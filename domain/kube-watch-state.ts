import type { ChangeCheckpoint } from './changes';
import type { Signal } from './incident';
import { parseWorkloadKey, workloadKey, type WorkloadRef } from './kube-owners';
import { failureSignal, recoverySignal, type Failure, type WarningEvidence } from './kube-signals';
import type { SignalType } from './vocabulary';

/**
 * The cluster watcher's failure state, level-triggered: per workload, which members (pods, the
 * rollout, the node) fail now, which of them ingestion already has, and which signals are still
 * to be delivered. `next()` says what to send; `done()` records that ingestion took it. Pure, so
 * a resumed watcher can rebuild it from a checkpoint and a fresh list of the cluster and send only
 * the difference: failures that began while it was down, and recoveries — never a known failure
 * again.
 */

export type WatchAction =
  | { status: 'firing'; workload: string; member: string; type: SignalType; signal: Signal }
  | { status: 'resolved'; workload: string; signal: Signal };

interface Observed {
  type: SignalType;
  signal: Signal;
}

interface WorkloadState {
  ref: WorkloadRef;
  /** Members failing now. */
  current: Map<string, Observed>;
  /** Seen failing, not yet delivered: kept even after the member recovers (nothing seen is dropped). */
  pending: Map<string, Observed>;
  /** Members ingestion has, with the type it has them as. */
  reported: Map<string, SignalType>;
  /** Ingestion has an open incident from us for this workload (a resolve is owed when it recovers). */
  open: boolean;
  /** Firing signals sent for the current incident (capped: see maxSignalsPerWorkload). */
  sent: number;
  lastType: SignalType;
}

// Checkpoint: heartbeat details and the activity's result. Small and secret-free: names, types,
// and the few signals not delivered yet. Read back through contracts/kube-watch.ts.
const MAX_CHECKPOINT_MEMBERS = 2000;
const MAX_CHECKPOINT_PENDING = 200;

export interface CheckpointWorkload {
  open: boolean;
  sent: number;
  lastType: SignalType;
  reported: Record<string, SignalType>;
  pending: { member: string; type: SignalType; signal: Signal }[];
}

export interface WatchCheckpoint {
  version: 1;
  /** Last resourceVersion seen per watched collection (pods, deployments, …), for diagnosis: a resume relists. */
  resourceVersions: Record<string, string>;
  /** `<namespace>/<Kind>/<name>` → state. */
  workloads: Record<string, CheckpointWorkload>;
  /** Deployment key → when it was first seen short of replicas (ms). */
  unavailableSince: Record<string, number>;
  /** Members left out of the checkpoint by its size cap (a resumed watcher may re-send those). */
  truncated: number;
  /** What the change record holds (activities/kube-watch/changes.ts). */
  changes?: ChangeCheckpoint;
}

export interface TrackerOptions {
  cluster: string;
  /**
   * Firing signals per incident: the first opens it, the next ones join as correlated signals;
   * past the cap further failing members are counted silently (a 500-pod Deployment is one
   * incident, not 500 timeline events).
   */
  maxSignalsPerWorkload: number;
}

export class FailureTracker {
  private readonly workloads = new Map<string, WorkloadState>();
  private readonly dirty = new Set<string>();

  constructor(private readonly opts: TrackerOptions) {}

  /** Restores what a previous run knew; call before the first observe(). */
  restore(cp: WatchCheckpoint): void {
    for (const [key, w] of Object.entries(cp.workloads)) {
      const ref = parseWorkloadKey(key);
      if (!ref) continue;
      const s = this.state(ref);
      s.open = w.open;
      s.sent = w.sent;
      s.lastType = w.lastType;
      for (const [m, t] of Object.entries(w.reported)) s.reported.set(m, t);
      for (const p of w.pending) s.pending.set(p.member, { type: p.type, signal: p.signal });
      this.dirty.add(key);
    }
  }

  /**
   * What ingestion's record says it has (an open incident of ours and its members), for what a
   * crash lost between the last checkpoint and the kill. `open` false: an incident that must not
   * be resolved from here (Escalated waits for a human).
   */
  knownToIngestion(ref: WorkloadRef, members: [string, SignalType][], open: boolean): void {
    const s = this.state(ref);
    for (const [m, t] of members) {
      s.reported.set(m, t);
      const p = s.pending.get(m);
      if (p && p.type === t) s.pending.delete(m);
    }
    s.open = s.open || open;
    s.sent = Math.max(s.sent, members.length);
    this.dirty.add(workloadKey(ref));
  }

  /** The member's failure now (undefined: healthy or gone). */
  observe(ref: WorkloadRef, member: string, failure: Failure | undefined, evidence?: WarningEvidence): void {
    const key = workloadKey(ref);
    if (!failure) {
      const s = this.workloads.get(key);
      if (!s) return;
      const wasFailing = s.current.delete(member);
      // Recovered: a later failure of the same member is news again.
      const wasReported = s.reported.delete(member);
      if (wasFailing || wasReported) this.dirty.add(key);
      this.dropIfIdle(key, s);
      return;
    }
    const s = this.state(ref);
    const known = s.current.get(member);
    if (known && known.type === failure.type) return; // same failure (restartCount rising is not news)
    const observed = { type: failure.type, signal: failureSignal(this.opts.cluster, ref, member, failure, evidence) };
    s.current.set(member, observed);
    if (s.reported.get(member) !== failure.type) s.pending.set(member, observed);
    this.dirty.add(key);
  }

  /** Every member of a workload that is not in `alive` (after a relist) is healthy or gone. */
  members(ref: WorkloadRef): string[] {
    const s = this.workloads.get(workloadKey(ref));
    return s ? [...new Set([...s.current.keys(), ...s.reported.keys()])] : [];
  }

  /** Every workload this tracker holds. */
  workloadRefs(): WorkloadRef[] {
    return [...this.workloads.values()].map((s) => s.ref);
  }

  /** Workloads with something to send (and forgets that they had). */
  takeDirty(): string[] {
    const keys = [...this.dirty];
    this.dirty.clear();
    return keys;
  }

  /** The next signal to deliver for a workload, in order: firings first, then its recovery. */
  next(key: string): WatchAction | undefined {
    const s = this.workloads.get(key);
    if (!s) return undefined;
    while (s.pending.size > 0) {
      const [member, p] = s.pending.entries().next().value as [string, Observed];
      if (s.open && s.sent >= this.opts.maxSignalsPerWorkload) {
        // Over the cap: the incident is open and says the workload fails; count it as known.
        s.pending.delete(member);
        if (s.current.has(member)) s.reported.set(member, p.type);
        continue;
      }
      return { status: 'firing', workload: key, member, type: p.type, signal: p.signal };
    }
    if (s.open && s.current.size === 0)
      return { status: 'resolved', workload: key, signal: recoverySignal(this.opts.cluster, s.ref, s.lastType) };
    return undefined;
  }

  /** Ingestion took `action`. */
  done(action: WatchAction): void {
    const s = this.workloads.get(action.workload);
    if (!s) return;
    if (action.status === 'firing') {
      const p = s.pending.get(action.member);
      if (p && p.signal === action.signal) s.pending.delete(action.member);
      if (s.current.get(action.member)?.type === action.type) s.reported.set(action.member, action.type);
      s.open = true;
      s.sent++;
      s.lastType = action.type;
    } else {
      s.open = false;
      s.sent = 0;
      s.reported.clear();
    }
    this.dropIfIdle(action.workload, s);
  }

  /** Ingestion refused `action` for good (a 4xx): not retried. */
  drop(action: WatchAction): void {
    const s = this.workloads.get(action.workload);
    if (!s) return;
    if (action.status === 'firing') s.pending.delete(action.member);
    else s.open = false;
    this.dropIfIdle(action.workload, s);
  }

  /** Counts for logs and the benchmark. */
  stats(): { workloads: number; failingMembers: number; pending: number; open: number } {
    let failingMembers = 0;
    let pending = 0;
    let open = 0;
    for (const s of this.workloads.values()) {
      failingMembers += s.current.size;
      pending += s.pending.size;
      if (s.open) open++;
    }
    return { workloads: this.workloads.size, failingMembers, pending, open };
  }

  checkpoint(resourceVersions: Record<string, string>, unavailableSince: Map<string, number>): WatchCheckpoint {
    const workloads: WatchCheckpoint['workloads'] = {};
    let members = 0;
    let pendingCount = 0;
    let truncated = 0;
    for (const [key, s] of this.workloads) {
      if (!s.open && s.pending.size === 0 && s.reported.size === 0) continue;
      const reported: Record<string, SignalType> = {};
      for (const [m, t] of s.reported) {
        if (members >= MAX_CHECKPOINT_MEMBERS) {
          truncated++;
          continue;
        }
        reported[m] = t;
        members++;
      }
      const pending: WatchCheckpoint['workloads'][string]['pending'] = [];
      for (const [member, p] of s.pending) {
        if (pendingCount >= MAX_CHECKPOINT_PENDING) {
          truncated++;
          continue;
        }
        pending.push({ member, type: p.type, signal: p.signal });
        pendingCount++;
      }
      workloads[key] = { open: s.open, sent: s.sent, lastType: s.lastType, reported, pending };
    }
    const since: Record<string, number> = {};
    let sinceCount = 0;
    for (const [k, v] of unavailableSince) {
      if (sinceCount >= MAX_CHECKPOINT_MEMBERS) break;
      since[k] = v;
      sinceCount++;
    }
    return { version: 1, resourceVersions, workloads, unavailableSince: since, truncated };
  }

  private state(ref: WorkloadRef): WorkloadState {
    const key = workloadKey(ref);
    let s = this.workloads.get(key);
    if (!s) {
      s = {
        ref,
        current: new Map(),
        pending: new Map(),
        reported: new Map(),
        open: false,
        sent: 0,
        lastType: 'Custom',
      };
      this.workloads.set(key, s);
    }
    return s;
  }

  private dropIfIdle(key: string, s: WorkloadState): void {
    if (!s.open && s.current.size === 0 && s.pending.size === 0 && s.reported.size === 0) this.workloads.delete(key);
  }
}
