import { type MaintenanceWindow, type OnCallSchedule } from '../../domain/escalation-policy';
import { maintenanceWindowSchema, onCallScheduleSchema } from '../../contracts/escalation';
import { activeMaintenance, onCallAt } from '../../domain/oncall';

const H = 60 * 60 * 1000;
const D = 24 * H;
const W = 7 * D;
const START = Date.parse('2026-11-02T09:00:00.000Z'); // a Monday 09:00 UTC

const chat = [{ channel: 'chat' as const }];
function schedule(over: Record<string, unknown> = {}): OnCallSchedule {
  return onCallScheduleSchema.parse({
    name: 'payments',
    start: '2026-11-02T09:00:00Z',
    people: [
      { name: 'alice', targets: chat },
      { name: 'bob', targets: chat },
      { name: 'carol', targets: chat },
    ],
    ...over,
  });
}
const iso = (ms: number) => new Date(ms).toISOString();

describe('onCallAt: the weekly rotation', () => {
  it('hands over every week, wrapping around the people, for several weeks', () => {
    const s = schedule();
    const people = Array.from({ length: 8 }, (_, week) => onCallAt(s, new Date(START + week * W + D)).person);
    expect(people).toEqual(['alice', 'bob', 'carol', 'alice', 'bob', 'carol', 'alice', 'bob']);
  });

  it('gives the shift bounds; the start belongs to the new shift, the end to the next', () => {
    const s = schedule();
    expect(onCallAt(s, new Date(START + W + 3 * H))).toEqual({
      schedule: 'payments',
      person: 'bob',
      since: iso(START + W),
      until: iso(START + 2 * W),
      override: false,
    });
    expect(onCallAt(s, new Date(START + W)).person).toBe('bob');
    expect(onCallAt(s, new Date(START + W - 1)).person).toBe('alice');
    expect(onCallAt(s, new Date(START)).since).toBe('2026-11-02T09:00:00.000Z');
  });

  it('counts backwards before the start (a proper modulo, never a negative index)', () => {
    const s = schedule();
    expect(onCallAt(s, new Date(START - 1))).toEqual({
      schedule: 'payments',
      person: 'carol',
      since: iso(START - W),
      until: iso(START),
      override: false,
    });
    const before = Array.from({ length: 6 }, (_, k) => onCallAt(s, new Date(START - (k + 1) * W + H)).person);
    expect(before).toEqual(['carol', 'bob', 'alice', 'carol', 'bob', 'alice']);
  });

  it('follows the shift length and the start offset', () => {
    const s = schedule({ shift: '12h', start: '2026-11-02T09:00:00+01:00' });
    const start = Date.parse('2026-11-02T08:00:00Z');
    expect(onCallAt(s, new Date(start + 13 * H))).toMatchObject({
      person: 'bob',
      since: iso(start + 12 * H),
      until: iso(start + 24 * H),
    });
    expect(onCallAt(s, new Date(start + 36 * H)).person).toBe('alice');
  });

  it('one person is always on call', () => {
    const s = schedule({ people: [{ name: 'solo', targets: chat }] });
    expect(onCallAt(s, new Date(START - 10 * W)).person).toBe('solo');
    expect(onCallAt(s, new Date(START + 10 * W)).person).toBe('solo');
  });
});

describe('onCallAt: overrides', () => {
  const overrides = [
    { person: 'carol', from: '2026-11-03T00:00:00Z', to: '2026-11-05T00:00:00Z' },
    { person: 'bob', from: '2026-11-04T00:00:00Z', to: '2026-11-04T12:00:00+01:00' },
  ];

  it('an override covering the moment wins over the rotation, with its own bounds', () => {
    const s = schedule({ overrides });
    expect(onCallAt(s, new Date('2026-11-03T10:00:00Z'))).toEqual({
      schedule: 'payments',
      person: 'carol',
      since: '2026-11-03T00:00:00.000Z',
      until: '2026-11-05T00:00:00.000Z',
      override: true,
    });
  });

  it('the latest-starting override wins when several cover the moment', () => {
    const s = schedule({ overrides });
    expect(onCallAt(s, new Date('2026-11-04T06:00:00Z'))).toEqual({
      schedule: 'payments',
      person: 'bob',
      since: '2026-11-04T00:00:00.000Z',
      until: '2026-11-04T11:00:00.000Z',
      override: true,
    });
    // Order in the list does not matter.
    const reversed = schedule({ overrides: [...overrides].reverse() });
    expect(onCallAt(reversed, new Date('2026-11-04T06:00:00Z')).person).toBe('bob');
  });

  it('outside every override (its end excluded) the rotation answers', () => {
    const s = schedule({ overrides });
    expect(onCallAt(s, new Date('2026-11-04T11:00:00Z')).person).toBe('carol'); // bob's ended, carol's still on
    expect(onCallAt(s, new Date('2026-11-05T00:00:00Z'))).toMatchObject({ person: 'alice', override: false });
    expect(onCallAt(s, new Date('2026-11-02T23:59:59Z'))).toMatchObject({ person: 'alice', override: false });
  });
});

describe('activeMaintenance', () => {
  const windows: MaintenanceWindow[] = [
    { name: 'prod-upgrade', namespace: 'prod', from: '2026-11-23T08:00:00Z', to: '2026-11-23T10:00:00Z' },
    { name: 'everything', namespace: '*', from: '2026-11-23T09:00:00Z', to: '2026-11-23T12:00:00Z' },
    { name: 'staging', namespace: 'staging', from: '2026-11-23T07:00:00Z', to: '2026-11-23T20:00:00Z' },
  ].map((w) => maintenanceWindowSchema.parse(w));
  const at = (isoText: string) => new Date(isoText);

  it('the window for the namespace covering the moment', () => {
    expect(activeMaintenance(windows, 'prod', at('2026-11-23T08:30:00Z'))?.name).toBe('prod-upgrade');
    expect(activeMaintenance(windows, 'prod', at('2026-11-23T08:00:00Z'))?.name).toBe('prod-upgrade');
  });

  it('`*` matches every namespace; the one ending last wins when several', () => {
    expect(activeMaintenance(windows, 'prod', at('2026-11-23T09:30:00Z'))?.name).toBe('everything');
    expect(activeMaintenance(windows, 'payments', at('2026-11-23T11:00:00Z'))?.name).toBe('everything');
    expect(activeMaintenance(windows, 'staging', at('2026-11-23T11:00:00Z'))?.name).toBe('staging');
  });

  it('none outside the windows, at their end, or for another namespace', () => {
    expect(activeMaintenance(windows, 'prod', at('2026-11-23T07:59:59Z'))).toBeUndefined();
    expect(activeMaintenance(windows, 'prod', at('2026-11-23T12:00:00Z'))).toBeUndefined();
    expect(activeMaintenance(windows, 'payments', at('2026-11-23T08:30:00Z'))).toBeUndefined();
    expect(activeMaintenance([], 'prod', at('2026-11-23T08:30:00Z'))).toBeUndefined();
  });
});
