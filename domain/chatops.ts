import type { ToolCall } from './agent-tools';
import { INCIDENT_STATES, type IncidentState } from './incident';

/**
 * The built-in ChatOps agent's slash commands (DESIGN §10), used when no LLM is configured.
 * Each command maps onto one call of the shared tool set, so commands and the LLM agent act
 * through the same code paths and audit trail. Anything that is not a well-formed command
 * answers with the help text and a short reason.
 */
export type ChatopsCommand = { kind: 'tool'; call: ToolCall } | { kind: 'help'; reason?: string };

interface CommandSpec {
  usage: string;
  about: string;
  /** The call, a reason to refuse, or undefined for "show the usage". */
  parse?: (args: string) => ToolCall | { reason: string } | undefined;
}

/** `NAME rest of text` → [NAME, 'rest of text'] (the rest verbatim, trimmed). */
function firstWord(args: string): [string, string] {
  const m = /^(\S+)\s*([\s\S]*)$/.exec(args);
  return m ? [normaliseName(m[1]!), m[2]!.trim()] : ['', ''];
}

/** Incident, postmortem and approval names are upper case; chat users type `inc-…` too. */
function normaliseName(word: string): string {
  return /^(inc|pm|apr)-\d{8}-\d+$/i.test(word) ? word.toUpperCase() : word;
}

/** Exactly one word (a name, a period) or nothing. */
function oneWord(args: string): string | undefined | null {
  if (args === '') return undefined;
  return /^\S+$/.test(args) ? args : null;
}

const named = (tool: 'show_incident' | 'show_postmortem') => (args: string) => {
  const name = oneWord(args);
  return name ? { tool, args: { name: normaliseName(name) } } : undefined;
};

const COMMANDS: Record<string, CommandSpec> = {
  help: { usage: '/help', about: 'this list' },
  incidents: {
    usage: '/incidents [state]',
    about: `open incidents, newest first; or those in one state (${INCIDENT_STATES.join(', ')})`,
    parse: (args) => {
      const word = oneWord(args);
      if (word === null) return undefined;
      if (word === undefined) return { tool: 'list_incidents', args: {} };
      const state = INCIDENT_STATES.find((s): s is IncidentState => s.toLowerCase() === word.toLowerCase());
      return state
        ? { tool: 'list_incidents', args: { state } }
        : { reason: `Unknown state ${word}: use one of ${INCIDENT_STATES.join(', ')}` };
    },
  },
  incident: {
    usage: '/incident NAME',
    about: 'one incident: state, risk, insight, latest events',
    parse: named('show_incident'),
  },
  ack: {
    usage: '/ack NAME [message]',
    about: 'acknowledge an incident (pauses its escalation)',
    parse: (args) => {
      const [name, message] = firstWord(args);
      if (!name) return undefined;
      return { tool: 'acknowledge_incident', args: { name, ...(message && { message }) } };
    },
  },
  snooze: {
    usage: '/snooze NAME DURATION [reason]',
    about: 'mute notifications for a Go duration such as 30m or 2h30m (max 24h)',
    parse: (args) => {
      const [name, afterName] = firstWord(args);
      const [duration, reason] = firstWord(afterName);
      if (!name || !duration) return undefined;
      return { tool: 'snooze_incident', args: { name, duration, ...(reason && { reason }) } };
    },
  },
  resolve: {
    usage: '/resolve NAME [resolution]',
    about: 'resolve an incident; the postmortem follows',
    parse: (args) => {
      const [name, resolution] = firstWord(args);
      if (!name) return undefined;
      return { tool: 'resolve_incident', args: { name, ...(resolution && { resolution }) } };
    },
  },
  approve: {
    usage: '/approve NAME [comment]',
    about: 'approve a pending remediation approval (APR-…): its plan runs',
    parse: (args) => {
      const [name, comment] = firstWord(args);
      if (!name) return undefined;
      return { tool: 'approve_approval', args: { name, ...(comment && { comment }) } };
    },
  },
  reject: {
    usage: '/reject NAME [reason]',
    about: 'reject a pending remediation approval: its plan does not run',
    parse: (args) => {
      const [name, reason] = firstWord(args);
      if (!name) return undefined;
      return { tool: 'reject_approval', args: { name, ...(reason && { reason }) } };
    },
  },
  postmortem: {
    usage: '/postmortem NAME',
    about: 'the postmortem of an incident (INC-… or PM-… name)',
    parse: named('show_postmortem'),
  },
  mttr: {
    usage: '/mttr [period]',
    about: 'mean time to resolve over a period such as 7d (default 30d), with a chart',
    parse: (args) => {
      const period = oneWord(args);
      if (period === null) return undefined;
      return { tool: 'mttr_summary', args: period ? { period } : {} };
    },
  },
  gateway: {
    usage: '/gateway status',
    about: 'the chat gateway adapters, queue depth and last delivery error',
    parse: (args) => {
      const sub = args.toLowerCase();
      if (sub === 'status') return { tool: 'gateway_status', args: {} };
      // The spec's `/gateway start` is an operator command of the CLI; a chat reaching us proves it runs.
      if (sub === 'start') return { reason: 'The gateway is already running: this message came through it.' };
      return undefined;
    },
  },
  sh: {
    usage: '/sh COMMAND',
    about: 'run a shell command on the worker host (timeout and output cap apply)',
    parse: (args) => (args ? { tool: 'run_shell', args: { command: args } } : undefined),
  },
};

export const HELP_TEXT = [
  'Commands:',
  ...Object.values(COMMANDS).map((c) => `${c.usage} — ${c.about}`),
  'Names look like INC-20260101-001 or APR-20260101-001; durations like 30m or 2h30m.',
].join('\n');

/** Parses one chat message. */
export function parseChatCommand(text: string): ChatopsCommand {
  // The rest after `/cmd` is kept verbatim (a shell command may hold any characters, even newlines).
  const m = /^\s*\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  if (!m) return { kind: 'help', reason: 'Not a command: commands start with /' };
  const word = m[1]!.toLowerCase();
  const spec = Object.hasOwn(COMMANDS, word) ? COMMANDS[word] : undefined;
  if (!spec) return { kind: 'help', reason: `Unknown command /${m[1]}` };
  if (!spec.parse) return { kind: 'help' };
  const parsed = spec.parse((m[2] ?? '').trim());
  if (!parsed) return { kind: 'help', reason: `Usage: ${spec.usage}` };
  return 'reason' in parsed ? { kind: 'help', reason: parsed.reason } : { kind: 'tool', call: parsed };
}
