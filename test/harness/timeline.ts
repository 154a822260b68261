/** The `i`-th correlated signal's timeline event of `incident`, as `appendTimeline` takes it. */
export function signalEvent(incident: string, i: number) {
  return {
    key: `${incident}/signal/${i}`,
    event: {
      timestamp: new Date(Date.UTC(2026, 10, 26, 12, 0, i)),
      type: 'SignalCorrelated' as const,
      source: 'alertmanager' as const,
      message: `signal ${i}`,
      details: { index: i },
    },
  };
}
