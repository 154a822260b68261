import { TOOL_NAMES } from '../../domain/agent-tools';
import { HELP_TEXT, parseChatCommand } from '../../domain/chatops';

const tool = (text: string) => {
  const parsed = parseChatCommand(text);
  if (parsed.kind !== 'tool') throw new Error(`${text} → help: ${parsed.reason}`);
  return parsed.call;
};

describe('parseChatCommand', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['/incidents', 'list_incidents', {}],
    ['/incidents escalated', 'list_incidents', { state: 'Escalated' }],
    ['/incidents RESOLVED', 'list_incidents', { state: 'Resolved' }],
    ['/incident INC-20260101-001', 'show_incident', { name: 'INC-20260101-001' }],
    ['/incident inc-20260101-001', 'show_incident', { name: 'INC-20260101-001' }],
    ['/ack INC-20260101-001', 'acknowledge_incident', { name: 'INC-20260101-001' }],
    [
      '/ack INC-20260101-001  on it,   rolling back ',
      'acknowledge_incident',
      { name: 'INC-20260101-001', message: 'on it,   rolling back' },
    ],
    ['/snooze INC-20260101-001 2h30m', 'snooze_incident', { name: 'INC-20260101-001', duration: '2h30m' }],
    [
      '/snooze INC-20260101-001 30m deploy window',
      'snooze_incident',
      { name: 'INC-20260101-001', duration: '30m', reason: 'deploy window' },
    ],
    ['/resolve INC-20260101-001', 'resolve_incident', { name: 'INC-20260101-001' }],
    [
      '/resolve INC-20260101-001 raised the memory limit',
      'resolve_incident',
      { name: 'INC-20260101-001', resolution: 'raised the memory limit' },
    ],
    ['/approve APR-20260101-001', 'approve_approval', { name: 'APR-20260101-001' }],
    ['/approve apr-20260101-001', 'approve_approval', { name: 'APR-20260101-001' }],
    [
      '/approve APR-20260101-001 diff looks right',
      'approve_approval',
      { name: 'APR-20260101-001', comment: 'diff looks right' },
    ],
    ['/reject APR-20260101-002', 'reject_approval', { name: 'APR-20260101-002' }],
    [
      '/reject apr-20260101-002   not during the sale ',
      'reject_approval',
      { name: 'APR-20260101-002', reason: 'not during the sale' },
    ],
    ['/postmortem INC-20260101-001', 'show_postmortem', { name: 'INC-20260101-001' }],
    ['/postmortem pm-20260101-002', 'show_postmortem', { name: 'PM-20260101-002' }],
    ['/mttr', 'mttr_summary', {}],
    ['/mttr 7d', 'mttr_summary', { period: '7d' }],
    ['/gateway status', 'gateway_status', {}],
    ['/sh ls -la | grep "a  b" && echo $HOME', 'run_shell', { command: 'ls -la | grep "a  b" && echo $HOME' }],
    ['/sh cat <<EOF\nline 1\nEOF', 'run_shell', { command: 'cat <<EOF\nline 1\nEOF' }],
  ])('%s', (text, name, args) => {
    expect(tool(text)).toEqual({ tool: name, args });
  });

  it('takes command names in any case and leading blanks', () => {
    expect(tool('/ACK INC-20260101-001')).toEqual({ tool: 'acknowledge_incident', args: { name: 'INC-20260101-001' } });
    expect(tool('  /Gateway STATUS')).toEqual({ tool: 'gateway_status', args: {} });
    expect(tool('/Incidents Failed')).toEqual({ tool: 'list_incidents', args: { state: 'Failed' } });
  });

  it('answers /help with the help text and no reason', () => {
    expect(parseChatCommand('/help')).toEqual({ kind: 'help' });
    expect(parseChatCommand('/HELP me')).toEqual({ kind: 'help' });
  });

  it.each<[string, string]>([
    ['hello there', 'Not a command: commands start with /'],
    ['', 'Not a command: commands start with /'],
    ['/foo bar', 'Unknown command /foo'],
    ['/', 'Not a command: commands start with /'],
    ['/constructor', 'Unknown command /constructor'],
    ['/incidents open now', 'Usage: /incidents [state]'],
    [
      '/incidents pending',
      'Unknown state pending: use one of Detected, Analyzing, Remediating, Resolved, Escalated, Failed',
    ],
    ['/incident', 'Usage: /incident NAME'],
    ['/incident INC-1 INC-2', 'Usage: /incident NAME'],
    ['/ack', 'Usage: /ack NAME [message]'],
    ['/snooze INC-20260101-001', 'Usage: /snooze NAME DURATION [reason]'],
    ['/snooze', 'Usage: /snooze NAME DURATION [reason]'],
    ['/resolve   ', 'Usage: /resolve NAME [resolution]'],
    ['/approve', 'Usage: /approve NAME [comment]'],
    ['/reject   ', 'Usage: /reject NAME [reason]'],
    ['/postmortem', 'Usage: /postmortem NAME'],
    ['/mttr 7d 30d', 'Usage: /mttr [period]'],
    ['/gateway', 'Usage: /gateway status'],
    ['/gateway stop', 'Usage: /gateway status'],
    ['/gateway start', 'The gateway is already running: this message came through it.'],
    ['/sh', 'Usage: /sh COMMAND'],
    ['/sh    ', 'Usage: /sh COMMAND'],
  ])('%j → help: %s', (text, reason) => {
    expect(parseChatCommand(text)).toEqual({ kind: 'help', reason });
  });

  it('lists every command on its own line of the help text', () => {
    const lines = HELP_TEXT.split('\n');
    for (const usage of [
      '/help',
      '/incidents [state]',
      '/incident NAME',
      '/ack NAME [message]',
      '/snooze NAME DURATION [reason]',
      '/resolve NAME [resolution]',
      '/approve NAME [comment]',
      '/reject NAME [reason]',
      '/postmortem NAME',
      '/mttr [period]',
      '/gateway status',
      '/sh COMMAND',
    ]) {
      expect(lines.filter((l) => l.startsWith(`${usage} — `))).toHaveLength(1);
    }
  });

  it('maps onto every tool of the shared tool set', () => {
    const used = new Set(
      [
        '/incidents',
        '/incident X',
        '/ack X',
        '/snooze X 1m',
        '/resolve X',
        '/approve X',
        '/reject X',
        '/postmortem X',
        '/mttr',
        '/gateway status',
        '/sh true',
      ].map((t) => tool(t).tool),
    );
    expect([...used].sort()).toEqual([...TOOL_NAMES].sort());
  });
});
