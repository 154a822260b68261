/** Request bodies and environments shared by the benchmarks. */

/** An Alertmanager v4 webhook with one firing crash-loop alert for `namespace/deployment`. */
export function firingAlert(namespace: string, deployment: string, fingerprint: string) {
  return {
    version: '4',
    groupKey: 'bench',
    status: 'firing',
    receiver: 'foghorn',
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://am',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'KubePodCrashLooping', severity: 'high', namespace, deployment },
        annotations: { summary: 'crash looping' },
        startsAt: new Date().toISOString(),
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: '',
        fingerprint,
      },
    ],
  };
}

/**
 * The webhook settings of a bench stack: callbacks to the local receiver, the built-in agent,
 * no home channel or transcription (the caller's environment must not leak in).
 */
export function webhookEnv(opts: { secret: string; callbackUrl: string; addr: string }): NodeJS.ProcessEnv {
  return {
    FOGHORN_WEBHOOK_ADDR: opts.addr,
    FOGHORN_WEBHOOK_SECRET: opts.secret,
    FOGHORN_WEBHOOK_CALLBACK_URL: opts.callbackUrl,
    FOGHORN_WEBHOOK_PATH: '',
    FOGHORN_WEBHOOK_HOME_CHANNEL: '',
    FOGHORN_LLM_BASE_URL: '', // the built-in ChatOps agent
    FOGHORN_STT: '',
  };
}
