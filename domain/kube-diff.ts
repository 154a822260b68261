import { stringify } from 'yaml';
import type {
  AdjustResourcesInput,
  DeletePodInput,
  RestartDeploymentInput,
  RollbackDeploymentInput,
  ScaleDeploymentInput,
} from './kube-actions';

/**
 * What an approver sees before a risky step runs: a `kubectl diff`-style unified diff of the
 * object as it is against the API server's dry-run answer to the very write the step would send
 * (activities/kube-preview.ts). Pure: the line diff, the object text, the size bound.
 */

export type KubePreviewInput =
  | ({ action: 'RestartDeployment' } & Omit<RestartDeploymentInput, 'key'>)
  | ({ action: 'ScaleDeployment' } & Omit<ScaleDeploymentInput, 'key'>)
  | ({ action: 'AdjustResources' } & Omit<AdjustResourcesInput, 'key'>)
  | ({ action: 'RollbackDeployment' } & Omit<RollbackDeploymentInput, 'key'>)
  | ({ action: 'DeletePod' } & Omit<DeletePodInput, 'key'>);

export interface KubePreview {
  /** `deployment payments/api` */
  target: string;
  /** Unified diff, at most MAX_PREVIEW_DIFF_BYTES; '' when nothing would change or the preview failed. */
  diff: string;
  /** One line: what the step would do. */
  summary: string;
  /** True when the API server accepted the write as a dry run (admission and validation passed). */
  dryRun: boolean;
  /** Why there is no preview (a classified message, no credentials). */
  error?: string;
}

/** A preview rides in an approval request and a workflow history: bounded. */
export const MAX_PREVIEW_DIFF_BYTES = 8 * 1024;
export const DIFF_TRUNCATED_LINE = '… (diff truncated)';

// ---------------------------------------------------------------------------------------------
// Line diff
// ---------------------------------------------------------------------------------------------

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Past this many cells the changed middle is shown as replaced whole: still a correct diff, not a minimal one. */
const MAX_LCS_CELLS = 4_000_000;

const linesOf = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/** Edit script of the middle part by longest common subsequence (deletions before insertions). */
function lcsOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_LCS_CELLS)
    return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w); // lcs[i*w+j]: LCS length of a[i..] and b[j..]
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i] });
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) ops.push({ kind: '-', line: a[i++] });
    else ops.push({ kind: '+', line: b[j++] });
  }
  while (i < n) ops.push({ kind: '-', line: a[i++] });
  while (j < m) ops.push({ kind: '+', line: b[j++] });
  return ops;
}

/** The edit script: the common head and tail first (an object diff is mostly those), LCS on the rest. */
function editScript(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const same = (line: string): Op => ({ kind: ' ', line });
  return [
    ...a.slice(0, head).map(same),
    ...lcsOps(a.slice(head, endA), b.slice(head, endB)),
    ...a.slice(endA).map(same),
  ];
}

/** `-a,b` of a hunk header: a count of 0 names the line before the (empty) range, as diff -u does. */
const range = (before: number, count: number) => `${count === 0 ? before : before + 1},${count}`;

/**
 * A unified diff (`--- from`, `+++ to`, `@@ -a,b +c,d @@` hunks with `context` lines around each
 * change; hunks closer than 2×context merge), or '' when the texts are equal. Texts are compared
 * line by line; a missing final newline is not reported.
 */
export function unifiedDiff(before: string, after: string, labels: { from: string; to: string }, context = 3): string {
  const ops = editScript(linesOf(before), linesOf(after));
  const changed = ops.flatMap((op, index) => (op.kind === ' ' ? [] : [index]));
  if (changed.length === 0) return '';
  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  // Lines of each side before ops[index], for the hunk headers.
  const oldBefore: number[] = [];
  const newBefore: number[] = [];
  let o = 0;
  let n = 0;
  for (const op of ops) {
    oldBefore.push(o);
    newBefore.push(n);
    if (op.kind !== '+') o++;
    if (op.kind !== '-') n++;
  }
  // Changes closer than 2×context lines share a hunk.
  const hunks: Array<{ from: number; to: number }> = [];
  for (const index of changed) {
    const prev = hunks[hunks.length - 1];
    if (prev && index - context <= prev.to + context) prev.to = index + 1;
    else hunks.push({ from: index, to: index + 1 });
  }
  for (const h of hunks) {
    const from = Math.max(0, h.from - context);
    const to = Math.min(ops.length, h.to + context);
    const body = ops.slice(from, to);
    const oldCount = body.filter((op) => op.kind !== '+').length;
    const newCount = body.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${range(oldBefore[from], oldCount)} +${range(newBefore[from], newCount)} @@`);
    for (const op of body) out.push(`${op.kind}${op.line}`);
  }
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Object text
// ---------------------------------------------------------------------------------------------

/** What the server changes on every write (and kubectl diff leaves out): noise for an approver. */
const NOISY_METADATA = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp'];

/**
 * A Kubernetes object as YAML with sorted keys (equal objects give equal text), without status
 * and the metadata the server rewrites on every write. Accepts client objects (Dates become
 * RFC 3339 text, undefined fields vanish); null or undefined give ''.
 */
export function objectYamlForDiff(obj: unknown): string {
  if (obj === null || obj === undefined) return '';
  const plain = JSON.parse(JSON.stringify(obj)) as Record<string, unknown>;
  if (plain && typeof plain === 'object' && !Array.isArray(plain)) {
    delete plain.status;
    const metadata = plain.metadata as Record<string, unknown> | undefined;
    if (metadata && typeof metadata === 'object') for (const key of NOISY_METADATA) delete metadata[key];
  }
  return stringify(plain, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });
}

/** `diff` cut at a line end so that it and the marker line fit `maxBytes` (UTF-8). */
export function boundDiff(diff: string, maxBytes = MAX_PREVIEW_DIFF_BYTES): string {
  const encoder = new TextEncoder();
  if (encoder.encode(diff).length <= maxBytes) return diff;
  const budget = maxBytes - encoder.encode(`${DIFF_TRUNCATED_LINE}\n`).length;
  let used = 0;
  const kept: string[] = [];
  for (const line of diff.split('\n')) {
    const size = encoder.encode(line).length + 1;
    if (used + size > budget) break;
    kept.push(line);
    used += size;
  }
  return `${kept.map((l) => `${l}\n`).join('')}${DIFF_TRUNCATED_LINE}\n`;
}
