import type { Client } from '@temporalio/client';
import { z } from 'zod';
import {
  callerIdentity,
  TOOL_NAMES,
  type ToolCall,
  type ToolCaller,
  type ToolName,
  type ToolResult,
} from '../domain/agent-tools';
import { toolArgs } from '../contracts/agent-tools';
import {
  formatIncidentDetail,
  formatIncidentList,
  INCIDENT_LINE_FIELDS,
  formatPostmortem,
  formatShellRun,
  LIST_CAP,
} from '../domain/agent-format';
import type { Config } from '../config/env';
import { formatDuration } from '../domain/duration';
import { ApiError } from '../domain/errors';
import { describeZodError } from '../contracts/envelope';
import type { Actor } from '../domain/incident-requests';
import { formatAdapterStatuses } from '../domain/gateway-status';
import { ACTIVE_STATES } from '../domain/incident';
import { roleAtLeast, type UserRole } from '../domain/roles';
import { decideApproval } from '../operations/approvals';
import {
  acknowledgeIncident,
  findIncident,
  MANUAL_RESOLUTION,
  resolveIncident,
  snoozeDuration,
  snoozeIncident,
  type IncidentOps,
} from '../operations/incidents';
import { appendAudit } from '../store/audit';
import { gatewayStatus } from '../store/chat';
import { getTimeline, listIncidents } from '../store/incidents';
import { getPostmortem, getPostmortemByIncident } from '../store/postmortems';
import { idempotencyKey, withHeartbeat } from './context';
import { createMttrActivities } from './mttr';
import { configuredShell, runShell, ShellDirError } from './shell';

/**
 * The chat agent's tools (DESIGN §10), one activity for all of them. Incident actions take the
 * API's code path (operations/incidents.ts), so they produce the same workflow updates, the same
 * refusals and the same audit records, with the chat caller as the audited user.
 */
export interface AgentToolDeps {
  config: Config;
  client: Client;
  taskQueue: string;
}

type Args<T extends ToolName> = z.output<(typeof toolArgs)[T]>;
type Handler<T extends ToolName> = (args: Args<T>, caller: ToolCaller) => Promise<ToolResult>;

/** Tools that change state, the role they need (as the API routes do) and what the refusal calls them. */
const WRITES: Partial<Record<ToolName, { role: UserRole; what: string }>> = {
  acknowledge_incident: { role: 'operator', what: 'acknowledge incidents' },
  snooze_incident: { role: 'operator', what: 'snooze incidents' },
  resolve_incident: { role: 'operator', what: 'resolve incidents' },
  // An approval needing admin is refused by its workflow (the gateway role is the chat user's role).
  approve_approval: { role: 'operator', what: 'approve remediations' },
  reject_approval: { role: 'operator', what: 'reject remediations' },
  // Arbitrary code on the worker host, even sandboxed (docs/decisions.md): never for viewers.
  run_shell: { role: 'operator', what: 'run shell commands' },
};

const SHELL_DISABLED = 'The shell tool is disabled (FOGHORN_AGENT_SHELL=off).';
/** Reasons already warned about: one line per worker process, not one per worker or test. */
const warnedShellOff = new Set<string>();

export function createAgentToolActivities(deps: AgentToolDeps) {
  const { config } = deps;
  // Decided at worker start: the sandbox (activities/shell.ts) or a clear reason why not.
  const configured = config.FOGHORN_AGENT_SHELL === 'on' ? configuredShell(config) : undefined;
  const shell = configured?.shell;
  if (shell && !shell.available && !warnedShellOff.has(shell.reason)) {
    warnedShellOff.add(shell.reason);
    console.warn(`foghorn worker: the agent shell (/sh) is off: ${shell.reason}`);
  }
  const ops: IncidentOps = { client: deps.client, taskQueue: deps.taskQueue };
  const mttr = createMttrActivities();
  const actor = (caller: ToolCaller): Actor => ({
    user: callerIdentity(caller),
    role: config.FOGHORN_GATEWAY_ROLE,
    sourceIP: 'webhook',
    userAgent: 'foghorn-gateway',
  });

  const handlers: { [T in ToolName]: Handler<T> } = {
    async list_incidents({ state }) {
      const page = await listIncidents({ state: state ?? ACTIVE_STATES }, 1, LIST_CAP, INCIDENT_LINE_FIELDS);
      return { text: formatIncidentList(page.items, { total: page.totalCount, now: new Date(), state }) };
    },

    async show_incident({ name }) {
      const incident = await findIncident(name);
      return { text: formatIncidentDetail(incident, await getTimeline(name), new Date()) };
    },

    async acknowledge_incident({ name, message }, caller) {
      const incident = await findIncident(name);
      const after = await acknowledgeIncident(ops, incident, {
        acknowledgedBy: callerIdentity(caller),
        message: message ?? '',
        actor: actor(caller),
      });
      return { text: `Acknowledged ${after.name} (${after.state}): escalation paused.` };
    },

    async snooze_incident({ name, duration, reason }, caller) {
      const durationMs = snoozeDuration(duration); // checked first, as the API does
      const incident = await findIncident(name);
      const after = await snoozeIncident(ops, incident, {
        duration,
        durationMs,
        reason: reason ?? '',
        snoozedBy: callerIdentity(caller),
        actor: actor(caller),
      });
      return {
        text: `Snoozed ${after.name} for ${formatDuration(durationMs)}: notifications muted until ${after.snoozeUntil?.toISOString()}.`,
      };
    },

    async resolve_incident({ name, resolution }, caller) {
      const incident = await findIncident(name);
      const { incident: after } = await resolveIncident(ops, incident, {
        resolution: resolution?.trim() || MANUAL_RESOLUTION, // the API's default for a bodiless resolve
        actor: actor(caller),
        atSource: false,
      });
      return {
        text: `Resolved ${after.name}: ${after.resolution}. The postmortem is being written (/postmortem ${after.name}).`,
      };
    },

    async show_postmortem({ name }) {
      if (/^PM-/i.test(name)) {
        const pm = await getPostmortem(name.toUpperCase());
        if (!pm) throw new ApiError(404, 'PostMortem not found', `PostMortem ${name} does not exist`);
        return { text: formatPostmortem(pm) };
      }
      const incident = await findIncident(name);
      const pm = await getPostmortemByIncident(incident.name);
      if (!pm) {
        return {
          text: `${incident.name} has no postmortem yet: it is written when the incident is resolved (now ${incident.state}).`,
        };
      }
      return { text: formatPostmortem(pm) };
    },

    async approve_approval({ name, comment }, caller) {
      const who = actor(caller);
      const after = await decideApproval(ops, name, { decision: 'approve', ...(comment && { comment }), actor: who });
      return { text: `Approved ${after.name} (by ${who.user}): plan ${after.plan} of ${after.incident} may proceed.` };
    },

    async reject_approval({ name, reason }, caller) {
      const who = actor(caller);
      const after = await decideApproval(ops, name, {
        decision: 'reject',
        ...(reason && { comment: reason }),
        actor: who,
      });
      return { text: `Rejected ${after.name} (by ${who.user}): plan ${after.plan} of ${after.incident} will not run.` };
    },

    mttr_summary: (args) => mttr.mttrSummary(args),

    async gateway_status() {
      return { text: formatAdapterStatuses(await gatewayStatus(config)) };
    },

    async run_shell({ command }, caller) {
      if (!shell) return { error: true, text: SHELL_DISABLED };
      if (!shell.available) return { error: true, text: `The shell tool is off: ${shell.reason}.` };
      const cwd = configured!.cwd;
      let run;
      try {
        run = await runShell(command, { timeoutMs: config.FOGHORN_AGENT_SHELL_TIMEOUT, cwd, sandbox: shell.sandbox });
      } catch (err) {
        if (err instanceof ShellDirError) return { error: true, text: `The shell cannot run: ${err.message}.` };
        throw err;
      }
      // Keyed by the activity execution: a retry after a lost completion does not audit twice.
      await appendAudit(
        {
          action: 'agent.shell',
          user: callerIdentity(caller),
          role: config.FOGHORN_GATEWAY_ROLE,
          resource: caller.chatId,
          resourceType: 'Chat',
          namespace: '',
          details: {
            command,
            cwd,
            exitCode: run.exitCode,
            signal: run.signal,
            timedOut: run.timedOut,
            messageId: caller.messageId,
          },
          sourceIP: 'webhook',
          userAgent: 'foghorn-gateway',
        },
        new Date(),
        idempotencyKey('agent.shell'),
      );
      return { text: formatShellRun(command, run) };
    },
  };

  async function run<T extends ToolName>(tool: T, rawArgs: unknown, caller: ToolCaller): Promise<ToolResult> {
    const write = WRITES[tool];
    if (write && !roleAtLeast(config.FOGHORN_GATEWAY_ROLE, write.role)) {
      return { error: true, text: `Forbidden: the gateway role ${config.FOGHORN_GATEWAY_ROLE} may not ${write.what}` };
    }
    const parsed = toolArgs[tool].safeParse(rawArgs ?? {});
    if (!parsed.success) {
      return { error: true, text: `Invalid arguments for ${tool}: ${describeZodError(parsed.error, 'args')}` };
    }
    try {
      return await handlers[tool](parsed.data as Args<T>, caller);
    } catch (err) {
      // Refusals the API would answer with 4xx go back to the user; anything else is retried.
      if (err instanceof ApiError)
        return { error: true, text: err.details ? `${err.message}: ${err.details}` : err.message };
      throw err;
    }
  }

  return {
    /** Runs one tool call for one chat caller. Throws only what a retry may fix (Temporal, MongoDB). */
    async runAgentTool(input: { caller: ToolCaller; call: ToolCall }): Promise<ToolResult> {
      const { tool, args } = input.call;
      if (!(TOOL_NAMES as string[]).includes(tool)) {
        return { error: true, text: `Unknown tool ${tool}: use one of ${TOOL_NAMES.join(', ')}` };
      }
      return withHeartbeat(() => run(tool, args, input.caller));
    },
  };
}

export type AgentToolActivities = ReturnType<typeof createAgentToolActivities>;
