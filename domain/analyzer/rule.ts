import type { Facts } from './facts';
import type { SuggestedAction } from './types';

/** One rule per signal type: a base confidence and what it concludes from the facts. */

export interface RuleResult {
  rootCause: string;
  /** Findings in the labels/description/correlated signals that support the diagnosis. */
  evidence: string[];
  recommendations: string[];
  actions: SuggestedAction[];
}

export interface Rule {
  /** Confidence with a description and no corroborating evidence. */
  base: number;
  run(f: Facts, incidentName: string): RuleResult;
}

export function exitCodeMeaning(code: number): string {
  switch (code) {
    case 0:
      return 'exit code 0: the main process finishes instead of staying up, and the pod restart policy keeps restarting it';
    case 1:
      return 'exit code 1: the application itself failed, typically a start-up error such as bad configuration or a missing dependency';
    case 126:
      return 'exit code 126: the container command is not executable (permissions or a wrong entrypoint)';
    case 127:
      return 'exit code 127: the container command was not found in the image (wrong entrypoint, command or missing binary)';
    case 137:
      return 'exit code 137 (SIGKILL): the container was killed, by the kernel OOM killer or after failing its liveness probe';
    case 139:
      return 'exit code 139 (SIGSEGV): the process crashed with a segmentation fault';
    case 143:
      return 'exit code 143 (SIGTERM): the container was asked to stop, usually by a failing liveness probe';
    default:
      return code > 128
        ? `exit code ${code}: the process was killed by signal ${code - 128}`
        : `exit code ${code}: the application exited with an error`;
  }
}

export const has = (text: string, re: RegExp): boolean => re.test(text);

/** How to describe the pods behind the resource (pod events and last state live on pods, not on workloads). */
export function describePods(f: Facts): string {
  if (f.kind === 'Pod' || f.kind === 'Node') return `${f.kubectl} describe ${f.ref}`;
  if (f.appSelector !== undefined) return `${f.kubectl} describe pods -l ${f.appSelector}`;
  return `${f.kubectl} describe pod <pod of ${f.ref}> (list them with ${f.kubectl} get pods)`;
}

/** How to read the logs of the resource; nodes have no `kubectl logs`, their agents log to the journal. */
export function logsCmd(f: Facts, flags: string): string {
  return f.kind === 'Node'
    ? `journalctl -u kubelet -u containerd --since "-30min" on node ${f.name}`
    : `${f.kubectl} logs ${f.ref} ${flags}`;
}
