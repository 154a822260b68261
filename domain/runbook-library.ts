import { NODE_DISK_CLEANUP_SCRIPT } from './disk-cleanup';
import type { RunbookInput } from './runbook';

/**
 * Runbooks shipped with Foghorn, seeded into every installation. contracts/runbooks.ts parses
 * each through runbookSpecSchema when it loads (BUILTIN_RUNBOOKS), so a bad entry fails at
 * start-up (and in the unit tests) instead of when an incident first matches it.
 *
 * Steps are listed in the order they run; every step of a plan runs (nothing stops a plan early
 * when its signal clears), so a runbook holds one fix and the next fix is another runbook. What
 * the evidence rules out (domain/remediation-guidance.ts) is skipped: a restart after a rollout,
 * a rollback with no rollout before the failure.
 */

/** Built-ins Foghorn no longer ships: removed from a store where no admin edited them. */
export const RETIRED_RUNBOOKS: readonly string[] = ['crashloop-restart-then-rollback'];

export const RUNBOOK_LIBRARY: readonly RunbookInput[] = [
  {
    name: 'oomkill-raise-memory-limit',
    category: 'oomkill',
    description:
      'Containers are being OOMKilled or running close to their memory limit. Raises the memory limit ' +
      'by 50%, which rolls the workload onto pods with the new limit. Treats the ' +
      'symptom: if the service leaks memory, the follow-up is a profile and a fix, not another raise.',
    version: '1.0.0',
    automated: true,
    approvalRequired: false,
    severity: ['critical', 'high', 'medium'],
    targets: {
      signalTypes: ['OOMKilled', 'HighMemory'],
      resourceKinds: ['Deployment', 'StatefulSet'],
    },
    steps: [
      {
        type: 'AdjustResources',
        params: { memoryLimitIncreasePercent: 50 },
        description: 'Raise the memory limit of every container by 50%',
      },
    ],
    // The new limit rolls the pods by itself: a restart after it would be a second rollout.
    // Each attempt compounds the +50%; two raises (2.25x) is enough before a human should look.
    maxAttempts: 2,
  },
  {
    name: 'crashloop-restart',
    category: 'crashloop',
    description:
      'Pods are crash-looping or not becoming ready with no rollout before it. A rolling restart clears ' +
      'transient causes (a dependency that was down at start-up, a stuck volume mount). It runs the same ' +
      'template, so it never helps after a bad deploy: when the evidence shows a rollout before the ' +
      'failure, Foghorn skips it and rolls back instead.',
    version: '1.0.0',
    automated: true,
    approvalRequired: false,
    severity: ['critical', 'high'],
    targets: {
      signalTypes: ['CrashLoopBackOff', 'PodNotReady', 'DeploymentFailing'],
      resourceKinds: ['Deployment'],
    },
    steps: [
      {
        type: 'RestartDeployment',
        params: {},
        description: 'Rolling restart of the deployment',
      },
    ],
    maxAttempts: 1,
  },
  {
    name: 'crashloop-rollback',
    category: 'crashloop',
    description:
      'Pods are crash-looping after a release. Rolls the deployment back to the newest revision Foghorn ' +
      'saw healthy (never to a revision it saw fail, never to the template running now); when no revision ' +
      'was seen healthy there is no rollback and a person is paged.',
    version: '1.0.0',
    automated: true,
    // Rolling back discards a release someone shipped on purpose: a human confirms first.
    approvalRequired: true,
    severity: ['critical', 'high'],
    targets: {
      signalTypes: ['CrashLoopBackOff', 'PodNotReady', 'DeploymentFailing'],
      resourceKinds: ['Deployment'],
    },
    steps: [
      {
        type: 'RollbackDeployment',
        params: {},
        description: 'Roll back to the newest revision seen healthy',
      },
    ],
    maxAttempts: 1,
  },
  {
    name: 'imagepull-rollback',
    category: 'crashloop',
    description:
      'New pods cannot pull their image (ImagePullBackOff): usually a mistyped tag, an image that was ' +
      'never pushed, or expired registry credentials. Old pods keep serving while the rollout is stuck, ' +
      'so rolling back to the newest revision seen healthy restores a clean state; then fix the image reference or ' +
      'pull secret and redeploy.',
    version: '1.0.0',
    automated: true,
    approvalRequired: true,
    severity: ['critical', 'high', 'medium'],
    targets: {
      signalTypes: ['ImagePullBackOff'],
      resourceKinds: ['Deployment'],
    },
    steps: [
      {
        type: 'RollbackDeployment',
        params: {},
        description: 'Roll back to the newest revision seen healthy',
      },
      {
        type: 'Wait',
        params: { duration: '2m' },
        description: 'Wait for the rolled-back pods to become ready',
      },
      {
        type: 'Notify',
        params: {
          channel: 'slack',
          message:
            'Rolled back after ImagePullBackOff. Check the image tag and the registry pull secret before redeploying.',
        },
      },
    ],
    maxAttempts: 1,
  },
  {
    name: 'latency-scale-out',
    category: 'latency',
    description:
      'Request latency is above its SLO threshold. Adds two replicas (never beyond 20) to spread load, ' +
      'then waits five minutes for new pods to take traffic and the latency percentiles to catch up. ' +
      'If latency does not improve with capacity, the bottleneck is downstream (database, dependency) ' +
      'and needs investigation rather than more replicas.',
    version: '1.0.0',
    automated: true,
    approvalRequired: false,
    severity: ['critical', 'high', 'medium'],
    targets: { signalTypes: ['HighLatency'], resourceKinds: ['Deployment'] },
    steps: [
      {
        type: 'ScaleDeployment',
        params: { replicasDelta: 2, maxReplicas: 20 },
        description: 'Add two replicas',
      },
      {
        type: 'Wait',
        params: { duration: '5m' },
        description: 'Let percentiles reflect the new capacity',
      },
    ],
    maxAttempts: 3,
  },
  {
    name: 'latency-error-rate-rollback',
    category: 'latency',
    description:
      'The error rate is elevated. Rolls the deployment back to the newest revision seen healthy, since a recent ' +
      'release is the usual cause of a sudden rise ' +
      'in 5xx responses. Requires approval because the error rate may come from a dependency, in which ' +
      'case a rollback does not help.',
    version: '1.0.0',
    automated: true,
    approvalRequired: true,
    severity: ['critical', 'high'],
    targets: { signalTypes: ['HighErrorRate'], resourceKinds: ['Deployment'] },
    steps: [
      {
        type: 'RollbackDeployment',
        params: {},
        description: 'Roll back to the newest revision seen healthy',
      },
      {
        type: 'Wait',
        params: { duration: '5m' },
        description: 'Let the error-rate window roll over',
      },
      {
        type: 'Notify',
        params: {
          channel: 'chat',
          message: 'Rolled back after an error-rate spike; review the last release before re-shipping it.',
        },
      },
    ],
    maxAttempts: 1,
  },
  {
    name: 'scaling-cpu-scale-out',
    category: 'scaling',
    description:
      'Pods are saturating their CPU. Adds one replica at a time, up to 10, waiting three minutes ' +
      'between steps so each new pod is counted before the next decision. Meant for workloads without ' +
      'a HorizontalPodAutoscaler; where one exists, raise its maxReplicas instead, or the HPA will undo ' +
      'this change.',
    version: '1.0.0',
    automated: true,
    approvalRequired: false,
    severity: ['high', 'medium'],
    targets: { signalTypes: ['HighCPU'], resourceKinds: ['Deployment'] },
    steps: [
      {
        type: 'ScaleDeployment',
        params: { replicasDelta: 1, maxReplicas: 10 },
        description: 'Add one replica',
      },
      {
        type: 'Wait',
        params: { duration: '3m' },
        description: 'Wait for the new pod to share load',
      },
    ],
    maxAttempts: 5,
  },
  {
    name: 'disk-pressure-cleanup',
    category: 'disk',
    description:
      'A node reports DiskPressure and the kubelet will start evicting pods. Frees space by deleting ' +
      'rotated container logs, vacuuming the systemd journal to 500 MB and pruning unused images, then ' +
      'tells the on-call channel. If pressure returns quickly, find the pod writing to its writable ' +
      'layer or emptyDir and give it a volume or an ephemeral-storage limit.',
    version: '1.0.0',
    automated: true,
    approvalRequired: false,
    severity: ['critical', 'high', 'medium'],
    targets: { signalTypes: ['DiskPressure'], resourceKinds: ['Node'] },
    steps: [
      {
        type: 'RunScript',
        params: { script: NODE_DISK_CLEANUP_SCRIPT, timeout: '10m' },
        description: 'Prune logs, journal and unused images on the node',
      },
      {
        type: 'Notify',
        params: {
          channel: 'slack',
          message: 'Ran disk cleanup on a node under DiskPressure; check the freed space in the run log.',
        },
      },
    ],
    maxAttempts: 2,
  },
  {
    name: 'network-restart-pods',
    category: 'network',
    description:
      'Workloads cannot reach services, most often because cluster DNS is failing. Deletes the CoreDNS ' +
      'pods so their Deployment recreates them with fresh upstream connections and caches, then posts ' +
      'to the incident chat. Needs approval: name resolution is briefly unavailable while the new pods ' +
      'start. If this does not help, look at the CNI agent on the affected nodes.',
    version: '1.0.0',
    automated: true,
    approvalRequired: true,
    severity: ['critical', 'high'],
    targets: {
      signalTypes: ['NetworkUnavailable'],
      resourceKinds: ['Pod', 'Node'],
    },
    steps: [
      {
        type: 'DeletePod',
        params: { namespace: 'kube-system', labelSelector: 'k8s-app=kube-dns' },
        description: 'Recreate the CoreDNS pods',
      },
      {
        type: 'Wait',
        params: { duration: '1m' },
        description: 'Wait for CoreDNS to become ready',
      },
      {
        type: 'Notify',
        params: {
          channel: 'chat',
          message: 'CoreDNS pods were restarted in response to a network reachability incident.',
        },
      },
    ],
    maxAttempts: 1,
  },
];
