import { z } from 'zod';
import { DurationError, parseDuration } from '../domain/duration';
import {
  ACTION_TYPES,
  HTTP_REQUEST_METHODS,
  NOTIFY_CHANNELS,
  RUNBOOK_NAME_RE,
  SEMVER_RE,
  type ActionType,
  type RunbookAction,
  type RunbookActionInput,
  type RunbookInput,
  type RunbookSpec,
} from '../domain/runbook';
import { RUNBOOK_LIBRARY } from '../domain/runbook-library';
import { dnsLabelSchema, objectNameSchema, quantitySchema } from './kubernetes';
import { sameType } from './type-check';
import { resourceKindSchema, runbookCategorySchema, severitySchema, signalTypeSchema } from './vocabulary';

/**
 * Runbooks as the API, the store and the built-in library validate them: the single source of
 * truth for what a runbook may hold. The types they parse to are domain/runbook.ts's.
 */

export const actionTypeSchema = z.enum(ACTION_TYPES);

// ---------------------------------------------------------------------------------------------
// Field validators shared by the action params
// ---------------------------------------------------------------------------------------------

const increasePercent = z.number().int().min(1).max(500);

/** A positive Go time.Duration string ("90s", "2m30s"), checked with the same parser the workflows use. */
export const goDuration = z.string().superRefine((text, ctx) => {
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch (err) {
    if (!(err instanceof DurationError)) throw err;
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `must be a Go duration such as "30s" or "2m" (${err.message})`,
    });
    return;
  }
  if (ms <= 0)
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'must be a positive duration',
    });
});

/**
 * A string field may hold `{{name}}` templates instead of its value: they are filled from the
 * incident and its insight when a plan is made, and the filled step is validated again then
 * (contracts/remediation.ts renderSteps).
 */
const templateText = z.string().regex(/\{\{\s*[A-Za-z][\w.-]*\s*\}\}/, 'must hold a {{template}}');
function templated<T extends z.ZodTypeAny>(schema: T) {
  return z.union([schema, templateText]);
}

// Every target field is optional: absent means "the incident's own resource", which is what
// lets one runbook serve every workload.
const target = {
  deployment: templated(objectNameSchema).optional(),
  namespace: templated(dnsLabelSchema).optional(),
};

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

/** One member of the action union; params are strict so a misspelt key fails instead of being ignored. */
function action<T extends ActionType, P extends z.ZodTypeAny>(type: T, params: P) {
  return z
    .object({
      type: z.literal(type),
      params,
      description: z.string().max(500).optional(),
    })
    .strict();
}

const restartParams = z.object(target).strict();

const scaleParams = z
  .object({
    ...target,
    replicas: z.number().int().min(0).max(1000).optional(),
    // Negative deltas scale in; zero would be a silent no-op, so it is rejected.
    replicasDelta: z
      .number()
      .int()
      .min(-1000)
      .max(1000)
      .refine((n) => n !== 0, 'must not be 0')
      .optional(),
    // Ceiling for replicasDelta, so repeated attempts cannot scale without bound.
    maxReplicas: z.number().int().min(1).max(1000).optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.replicas === undefined && p.replicasDelta === undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: 'one of "replicas" or "replicasDelta" is required',
      });
    if (p.replicas !== undefined && p.replicasDelta !== undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: '"replicas" and "replicasDelta" are mutually exclusive',
      });
    if (p.replicas !== undefined && p.maxReplicas !== undefined && p.replicas > p.maxReplicas)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['replicas'],
        message: 'must not exceed "maxReplicas"',
      });
  });

const adjustParams = z
  .object({
    ...target,
    container: templated(dnsLabelSchema).optional(), // absent = every container in the pod template
    memoryLimit: templated(quantitySchema).optional(),
    memoryLimitIncreasePercent: increasePercent.optional(),
    cpuLimit: templated(quantitySchema).optional(),
    cpuLimitIncreasePercent: increasePercent.optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const memory = p.memoryLimit !== undefined || p.memoryLimitIncreasePercent !== undefined;
    const cpu = p.cpuLimit !== undefined || p.cpuLimitIncreasePercent !== undefined;
    if (!memory && !cpu)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          'at least one of memoryLimit, memoryLimitIncreasePercent, cpuLimit, cpuLimitIncreasePercent is required',
      });
    // An absolute value and a relative one for the same resource contradict each other.
    if (p.memoryLimit !== undefined && p.memoryLimitIncreasePercent !== undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: '"memoryLimit" and "memoryLimitIncreasePercent" are mutually exclusive',
      });
    if (p.cpuLimit !== undefined && p.cpuLimitIncreasePercent !== undefined)
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: '"cpuLimit" and "cpuLimitIncreasePercent" are mutually exclusive',
      });
  });

const rollbackParams = z
  .object({
    ...target,
    toRevision: z.number().int().min(1).optional(), // absent = the previous revision
  })
  .strict();

const deletePodParams = z
  .object({
    pod: templated(objectNameSchema).optional(), // absent (with no labelSelector) = the incident's pod
    namespace: templated(dnsLabelSchema).optional(),
    labelSelector: z.string().min(1).max(1000).optional(),
  })
  .strict()
  .refine((p) => p.pod === undefined || p.labelSelector === undefined, {
    message: '"pod" and "labelSelector" are mutually exclusive',
  });

const httpParams = z
  .object({
    url: templated(
      z
        .string()
        .url()
        .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
    ),
    method: z.enum(HTTP_REQUEST_METHODS).default('GET'),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name'), z.string()).optional(),
    body: z.string().optional(),
    expectStatus: z.number().int().min(100).max(599).optional(),
  })
  .strict()
  // fetch() throws on a GET with a body; fail at authoring time instead of at run time.
  .refine((p) => !(p.method === 'GET' && p.body !== undefined), {
    message: 'a GET request cannot have a body',
    path: ['body'],
  });

const runScriptParams = z
  .object({
    script: z.string().min(1).max(10_000),
    timeout: goDuration.optional(),
  })
  .strict();

const waitParams = z.object({ duration: goDuration }).strict();

const notifyParams = z
  .object({
    channel: z.enum(NOTIFY_CHANNELS),
    message: z.string().min(1),
  })
  .strict();

export const actionSchema = z.discriminatedUnion('type', [
  action('RestartDeployment', restartParams),
  action('ScaleDeployment', scaleParams),
  action('AdjustResources', adjustParams),
  action('RollbackDeployment', rollbackParams),
  action('DeletePod', deletePodParams),
  action('HttpRequest', httpParams),
  action('RunScript', runScriptParams),
  action('Wait', waitParams),
  action('Notify', notifyParams),
]);
// The union lists every action type of ACTION_TYPES, each with the params domain/runbook.ts declares.
sameType<z.output<typeof actionSchema>, RunbookAction>(true);
sameType<z.input<typeof actionSchema>, RunbookActionInput>(true);

// ---------------------------------------------------------------------------------------------
// Runbook spec
// ---------------------------------------------------------------------------------------------

/** An array whose entries must be distinct (a duplicate is always an authoring mistake). */
function unique<T extends z.ZodTypeAny>(array: z.ZodArray<T>) {
  return array.superRefine((items, ctx) => {
    const seen = new Set<unknown>();
    items.forEach((v, i) => {
      if (seen.has(v))
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: [i],
          message: `duplicate value ${JSON.stringify(v)}`,
        });
      seen.add(v);
    });
  });
}

// Kept a plain ZodObject (no top-level refinements) so .omit() can derive the update schema.
export const runbookSpecSchema = z
  .object({
    name: z
      .string()
      .max(63)
      .regex(RUNBOOK_NAME_RE, 'must be a DNS label: lowercase alphanumerics and "-", starting and ending alphanumeric'),
    category: runbookCategorySchema,
    description: z.string().min(1).max(2000),
    version: z.string().regex(SEMVER_RE, 'must be a semantic version such as "1.0.0"'),
    automated: z.boolean().default(true), // false = suggested to a human, never run by the system
    approvalRequired: z.boolean().default(false), // true = a workflow waits for an approval first
    severity: unique(z.array(severitySchema).min(1, 'must list at least one severity')),
    // Empty lists mean "no restriction" when matching an incident.
    targets: z
      .object({
        signalTypes: unique(z.array(signalTypeSchema)).default([]),
        resourceKinds: unique(z.array(resourceKindSchema)).default([]),
      })
      .strict()
      .default({}),
    steps: z.array(actionSchema).min(1, 'must have at least one step').max(50, 'must have at most 50 steps'),
    maxAttempts: z.number().int().min(1).max(10).default(3),
    // How long a plan of this runbook is verified after its steps; absent = FOGHORN_VERIFY_WINDOW.
    verificationWindow: goDuration
      .refine((text) => {
        try {
          return parseDuration(text) <= 30 * 60_000;
        } catch {
          return true; // reported by goDuration
        }
      }, 'must be at most 30m')
      .optional(),
  })
  .strict();

sameType<z.output<typeof runbookSpecSchema>, RunbookSpec>(true);
sameType<z.input<typeof runbookSpecSchema>, RunbookInput>(true);

/** PUT body: the whole spec except `name`, which comes from the path (a `name` key is rejected). */
export const runbookUpdateSchema = runbookSpecSchema.omit({ name: true });
export type RunbookUpdate = z.output<typeof runbookUpdateSchema>;
export type RunbookUpdateInput = z.input<typeof runbookUpdateSchema>;

// ---------------------------------------------------------------------------------------------
// The built-in library
// ---------------------------------------------------------------------------------------------

function load(input: RunbookInput): RunbookSpec {
  const result = runbookSpecSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new Error(`built-in runbook "${input.name}" is invalid: ${issues}`);
}

/** domain/runbook-library.ts's runbooks, validated when this module loads: a bad entry fails at start-up (and in the unit tests). */
export const BUILTIN_RUNBOOKS: readonly RunbookSpec[] = Object.freeze(RUNBOOK_LIBRARY.map(load));
