import type { SignalType } from '../vocabulary';
import { notify } from './actions';
import { logsCmd, type Rule } from './rule';

/** Signals no built-in rule covers. */
export const CUSTOM_RULES: Readonly<Record<Extract<SignalType, 'Custom'>, Rule>> = {
  Custom: {
    base: 0.3,
    run(f, inc) {
      const evidence: string[] = [];
      if (f.alertname !== undefined) evidence.push(`alert ${f.alertname}`);
      const what = f.alertname !== undefined ? ` (alert ${f.alertname})` : '';
      return {
        rootCause:
          f.description !== ''
            ? `No built-in rule covers this signal on ${f.resource}${what}. The source reports: "${f.description}".`
            : `No built-in rule covers this signal on ${f.resource}${what}, and the source gave no description, so the cause cannot be determined from the signal alone.`,
        evidence,
        recommendations: [
          `Start with the workload's recent events and logs: ${f.kubectl} describe ${f.ref} and ${logsCmd(f, '--since=30m')}.`,
          `List recent changes in namespace ${f.namespace} (rollouts, ConfigMap and Secret updates) and check whether one lines up with the start of the incident.`,
          f.alertname !== undefined
            ? `Map alert ${f.alertname} to a specific signal type in Foghorn's alert mapping so future occurrences get a targeted analysis.`
            : 'Send a specific signal type with future signals so they get a targeted analysis.',
        ],
        actions: [notify(f, inc, f.description !== '' ? f.description : `${f.resource} needs investigation.`)],
      };
    },
  },
};
