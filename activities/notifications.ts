import { createHash } from 'crypto';
import { ApplicationFailure } from '@temporalio/common';
import { truncateReply } from '../domain/chat';
import { temporalUiNamespaceUrl, type Config } from '../config/env';
import {
  choosePolicy,
  describeTarget,
  ladderOf,
  type ChannelTarget,
  type EscalationPolicy,
  type Ladder,
} from '../domain/escalation-policy';
import {
  chatText,
  pagerDutyChangeUrl,
  pagerDutyEvent,
  slackMessage,
  webhookEvent,
  type NotificationContent,
  type NotificationEvent,
} from '../domain/notification-formats';
import { onCallAt } from '../domain/oncall';
import { signWebhook } from '../domain/webhook-signature';
import { getApproval } from '../store/approvals';
import { getPolicy, getSchedule, listPolicies, maintenanceAt } from '../store/escalation-config';
import { SecretUnreadableError } from '../store/cluster-secrets';
import { appendTimeline, getIncident, updateIncident, type IncidentRecord } from '../store/incidents';
import { deliveryOnce, markNotificationDelivered, markNotificationFailed } from '../store/notification-deliveries';
import { getPlan } from '../store/remediations';
import { createCallbackActivities } from './callbacks';
import { idempotencyKey } from './context';
import { postJson, retryLater, type PostOutcome } from './http-post';

/**
 * Where a notification goes, as a workflow may carry it: `ref` says where to find the target
 * (a policy level's target, or a scheduled person's), never what it is — URLs, routing keys and
 * signing secrets are read from the store by the activity that sends.
 */
export interface Endpoint {
  ref: string;
  /**
   * Which real endpoint the target was when planned (a truncated hash of it, never the secret):
   * deliveries to one endpoint queue together, and one that changed since is not sent to.
   */
  id: string;
  channel: ChannelTarget['channel'];
  /** Redacted: the host, or the chat id. */
  target: string;
  /** The person on call when the target came from a schedule. */
  person?: string;
  /** PagerDuty and webhooks track an incident's state: they hear acknowledge and resolve too. */
  stateful: boolean;
}

type Ref = ['policy', string, number, number] | ['person', string, string, number] | ['home'];

export interface DeliveryInput {
  incident: string;
  endpoint: Endpoint;
  event: NotificationEvent;
  /** 1-based ladder level; 0 for notifications that are not a rung (acknowledge, resolve, approvals, Notify steps). */
  level: number;
  attempt: number;
  /** What makes this notification distinct for the endpoint: `L2.1`, an approval name, `<plan>/<step>`. */
  scope: string;
  message?: string;
  approval?: string;
}

/** `not sent`: the target was removed or changed since the notification was planned. */
export type DeliveryOutcome = 'delivered' | 'already delivered' | 'recorded' | 'not sent';

const NOT_DELIVERED = 'NotificationNotDelivered';

function unreadableAsMissing(err: unknown): undefined {
  if (err instanceof SecretUnreadableError) return undefined;
  throw err;
}

/**
 * The escalation engine's side effects (docs/escalation.md), each idempotent: the activities, and
 * the escalation steps the triage runs itself when automation has nothing to try
 * (activities/incident-stages.ts), the same code either way.
 */
export function createNotificationSteps(config: Config) {
  const callbacks = createCallbackActivities(config);
  const homeChannel = config.FOGHORN_WEBHOOK_HOME_CHANNEL;
  const apiBase = (config.FOGHORN_PUBLIC_URL ?? `http://localhost:${config.FOGHORN_API_ADDR.port}`).replace(/\/$/, '');
  const temporalWorkflows = `${temporalUiNamespaceUrl(config)}/workflows`;

  async function mustGetIncident(name: string): Promise<IncidentRecord> {
    const incident = await getIncident(name);
    if (!incident) throw new Error(`incident ${name} does not exist`); // written before its workflow starts: retried
    return incident;
  }

  /** The incident's policy as stored now (it may have been edited since it was chosen). */
  async function policyOf(incident: IncidentRecord, name?: string): Promise<EscalationPolicy> {
    // A policy sealed with a key this process no longer has is as good as gone: the choice stands in.
    const named = name ? await getPolicy(name).catch(unreadableAsMissing) : undefined;
    return named ?? choosePolicy(await listPolicies(), incident);
  }

  async function targetOf(ref: Ref): Promise<ChannelTarget | undefined> {
    switch (ref[0]) {
      case 'policy': {
        const target = (await getPolicy(ref[1]))?.levels[ref[2]]?.targets[ref[3]];
        return target && 'channel' in target ? target : undefined;
      }
      case 'person': {
        const person = (await getSchedule(ref[1]))?.people.find((p) => p.name === ref[2]);
        return person?.targets[ref[3]];
      }
      case 'home':
        return { channel: 'chat' };
    }
  }

  /** A stable name for where a target leads (hashed: it is built from secrets). */
  function endpointId(target: ChannelTarget): string {
    const where =
      target.channel === 'chat'
        ? `chat ${target.chatId ?? homeChannel ?? ''}`
        : target.channel === 'pagerduty'
          ? `pagerduty ${target.routingKey}`
          : `${target.channel} ${target.url}`;
    return createHash('sha256').update(where).digest('hex').slice(0, 16);
  }

  function endpoint(ref: Ref, target: ChannelTarget, person?: string): Endpoint {
    const shown = describeTarget(target, config.FOGHORN_PAGERDUTY_URL);
    return {
      ref: JSON.stringify(ref),
      id: endpointId(target),
      channel: target.channel,
      target: target.channel === 'chat' && !target.chatId ? (homeChannel ?? shown.target) : shown.target,
      ...(person && { person }),
      stateful: target.channel === 'pagerduty' || target.channel === 'webhook',
    };
  }

  /** A level's endpoints now: schedules resolved to who is on call, duplicates dropped, unusable ones said why. */
  async function endpointsOf(
    policy: EscalationPolicy,
    level: number,
    at: Date,
    only?: ChannelTarget['channel'],
  ): Promise<{ endpoints: Endpoint[]; problems: string[] }> {
    const found: { id: string; endpoint: Endpoint }[] = [];
    const problems: string[] = [];
    const add = (ref: Ref, target: ChannelTarget, person?: string) => {
      if (only && target.channel !== only) return;
      if (target.channel === 'chat' && !target.chatId && !homeChannel) {
        problems.push('the chat home channel is not set (FOGHORN_WEBHOOK_HOME_CHANNEL)');
        return;
      }
      const id = endpointId(target);
      if (!found.some((f) => f.id === id)) found.push({ id, endpoint: endpoint(ref, target, person) });
    };
    for (const [i, target] of (policy.levels[level]?.targets ?? []).entries()) {
      if (!('schedule' in target)) {
        add(['policy', policy.name, level, i], target);
        continue;
      }
      const schedule = await getSchedule(target.schedule);
      if (!schedule) {
        problems.push(`schedule ${target.schedule} does not exist`);
        continue;
      }
      const shift = onCallAt(schedule, at);
      const person = schedule.people.find((p) => p.name === shift.person)!;
      for (const [j, t] of person.targets.entries()) add(['person', schedule.name, person.name, j], t, person.name);
    }
    return { endpoints: found.map((f) => f.endpoint), problems: [...new Set(problems)] };
  }

  async function content(input: DeliveryInput, incident: IncidentRecord): Promise<NotificationContent> {
    const approval = input.approval ? await getApproval(input.approval) : undefined;
    return {
      event: input.event,
      incident: {
        name: incident.name,
        namespace: incident.namespace,
        cluster: incident.cluster,
        resource: incident.resource,
        severity: incident.severity,
        state: incident.state,
        signalType: incident.signalType,
        riskScore: incident.riskScore,
        description: incident.description,
        detectedAt: incident.detectedAt.toISOString(),
        ...(incident.acknowledgedBy && { acknowledgedBy: incident.acknowledgedBy }),
        ...(incident.resolvedBy && { resolvedBy: incident.resolvedBy }),
        ...(incident.resolution && { resolution: incident.resolution }),
      },
      level: input.level,
      attempt: input.attempt,
      at: new Date().toISOString(),
      ...(input.message && { message: input.message }),
      ...(approval && {
        approval: {
          name: approval.name,
          requiredRole: approval.requiredRole,
          expiresAt: new Date(approval.expiresAt).toISOString(),
          risk: approval.riskScore,
          summary: approval.action,
          ...(approval.status !== 'pending' && { outcome: approval.status }),
        },
      }),
      links: {
        incident: `${apiBase}${config.FOGHORN_BASE_PATH}/incidents/${encodeURIComponent(incident.name)}`,
        temporal: `${temporalWorkflows}/${encodeURIComponent(incident.name)}`,
      },
    };
  }

  /** Sends to one endpoint in its receiver's format; true when the receiver took it (or it was only recorded). */
  async function send(
    key: string,
    target: ChannelTarget,
    body: NotificationContent,
  ): Promise<{ ok: true; recorded?: boolean } | Extract<PostOutcome, { ok: false }>> {
    const headers = { 'User-Agent': 'foghorn-notifier', 'Idempotency-Key': key };
    switch (target.channel) {
      case 'slack':
        return postJson(target.url, JSON.stringify(slackMessage(body)), headers);
      case 'pagerduty': {
        // A Notify step is a Change Event: a message for the service's timeline, not an alert.
        const url =
          body.event === 'remediation.notify'
            ? pagerDutyChangeUrl(config.FOGHORN_PAGERDUTY_URL)
            : config.FOGHORN_PAGERDUTY_URL;
        return postJson(url, JSON.stringify(pagerDutyEvent(body, target.routingKey)), headers);
      }
      case 'webhook': {
        const json = JSON.stringify(webhookEvent(body));
        const timestamp = Math.floor(Date.now() / 1000);
        return postJson(target.url, json, {
          ...headers,
          'webhook-id': key,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(target.secret, key, timestamp, json),
        });
      }
      case 'chat': {
        // The gateway's own delivery path (records, retries, signing): one per notification.
        const outcome = await callbacks.deliverCallback({
          messageId: key,
          chatId: target.chatId ?? homeChannel!,
          kind: 'proactive',
          seq: 1,
          text: truncateReply(chatText(body)),
        });
        return { ok: true, ...(outcome === 'recorded' && { recorded: true }) };
      }
    }
  }

  async function note(incident: string, key: string, message: string, details: Record<string, unknown> = {}) {
    await appendTimeline(incident, [
      {
        key,
        event: { timestamp: new Date(), type: 'Notification', source: 'notifier', message, details },
      },
    ]);
  }

  async function deliverNotification(input: DeliveryInput): Promise<DeliveryOutcome> {
    const ref = JSON.parse(input.endpoint.ref) as Ref;
    const target = await targetOf(ref);
    const shown = { channel: input.endpoint.channel, target: input.endpoint.target };
    const where = `${shown.channel} ${shown.target}${input.endpoint.person ? ` (${input.endpoint.person})` : ''}`;
    if (!target || endpointId(target) !== input.endpoint.id) {
      // The policy or schedule was edited since the rung was planned: the target is gone, or the
      // same place in it now leads elsewhere (a resolve must not go to another routing key).
      await note(
        input.incident,
        `notification/${input.incident}/${input.event}/${input.scope}/${input.endpoint.ref}`,
        `Not sent to ${where}: the target is no longer configured as it was`,
        { ...shown, level: input.level, attempt: input.attempt },
      );
      return 'not sent';
    }
    const key = `${input.incident}.${input.event}.${input.scope}.${endpointId(target)}`;
    const record = await deliveryOnce(
      { key, incident: input.incident, event: input.event, ...shown, level: input.level, attempt: input.attempt },
      new Date(),
    );
    const details = {
      ...shown,
      level: input.level,
      attempt: input.attempt,
      event: input.event,
      ...(input.endpoint.person && { person: input.endpoint.person }),
    };
    const rung = input.level > 0 ? ` L${input.level}${input.attempt > 1 ? ` (repeat ${input.attempt - 1})` : ''}` : '';
    if (record.status === 'delivered') {
      await note(input.incident, `notification/${key}`, `Notified${rung} via ${where}: ${input.event}`, details);
      return 'already delivered';
    }
    const incident = await mustGetIncident(input.incident);
    const outcome = await send(key, target, await content(input, incident));
    if (!outcome.ok) {
      await markNotificationFailed(key, outcome.failure, new Date());
      if (outcome.permanent)
        throw ApplicationFailure.nonRetryable(`${input.event} to ${where} refused: ${outcome.failure}`, NOT_DELIVERED);
      throw retryLater(
        `${input.event} to ${where} not delivered: ${outcome.failure}`,
        NOT_DELIVERED,
        outcome.retryAfterMs,
      );
    }
    await markNotificationDelivered(key, new Date());
    const recorded = 'recorded' in outcome && outcome.recorded;
    await note(
      input.incident,
      `notification/${key}`,
      `${recorded ? 'Recorded (no callback URL)' : 'Notified'}${rung} via ${where}: ${input.event}`,
      details,
    );
    return recorded ? 'recorded' : 'delivered';
  }

  /**
   * A level's endpoints (0-based `level`) as they are now. With none usable, the timeline says
   * plainly that nobody was notified and why (once: the note is keyed by the rung).
   */
  async function levelEndpointsOf(
    incident: string,
    policy: EscalationPolicy,
    level: number,
    why: string,
  ): Promise<Endpoint[]> {
    const { endpoints, problems } = await endpointsOf(policy, level, new Date());
    if (endpoints.length === 0) {
      const reason = problems.length ? problems.join('; ') : `policy ${policy.name} has no level ${level + 1}`;
      await note(
        incident,
        `notification/${incident}/none/${why}`,
        `No notification channel is configured for ${why} of escalation policy ${policy.name}: ${reason}; nobody was notified`,
        { channel: 'none', target: '', level: level + 1 },
      );
    }
    return endpoints;
  }

  /** What the triage needs to escalate an incident itself: the same reads the ladder's activities make. */
  const escalation = {
    /** The incident's policy now: the first match by namespace and severity. */
    policyFor: (incident: IncidentRecord): Promise<EscalationPolicy> => policyOf(incident),
    /**
     * L1's endpoints for a ladder about to start, read as its first rung would read them; undefined
     * while a maintenance window holds the namespace (the ladder then holds, and reads them itself).
     */
    async firstLevel(incident: IncidentRecord, policy: EscalationPolicy): Promise<Endpoint[] | undefined> {
      if (await maintenanceAt(incident.namespace, new Date())) return undefined;
      return levelEndpointsOf(incident.name, policy, 0, 'L1');
    },
  };

  const activities = {
    deliverNotification,

    /**
     * The incident's policy, chosen now by namespace and severity (first match), recorded on the
     * incident; the workflow carries only its timings.
     */
    async chooseEscalation(input: { incident: string }): Promise<{ ladder: Ladder; none: boolean }> {
      const policy = await policyOf(await mustGetIncident(input.incident));
      await updateIncident(input.incident, { escalationPolicy: policy.name }, { allowResolved: true });
      return { ladder: ladderOf(policy), none: policy.levels.length === 0 };
    },

    /** A level's endpoints now (`levelEndpointsOf`), under the policy the incident escalated with. */
    async levelEndpoints(input: {
      incident: string;
      policy?: string;
      level: number;
      why: string;
    }): Promise<Endpoint[]> {
      const incident = await mustGetIncident(input.incident);
      return levelEndpointsOf(input.incident, await policyOf(incident, input.policy), input.level, input.why);
    },

    /** A delivery that ran out of tries: said on the timeline (the record keeps the last error). */
    async noteNotificationFailed(input: DeliveryInput & { error: string }): Promise<void> {
      const where = `${input.endpoint.channel} ${input.endpoint.target}`;
      await note(
        input.incident,
        `notification-failed/${input.incident}/${input.event}/${input.scope}/${input.endpoint.ref}`,
        `Could not notify ${where} of ${input.event}: ${input.error}`,
        {
          channel: input.endpoint.channel,
          target: input.endpoint.target,
          level: input.level,
          attempt: input.attempt,
          failed: true,
        },
      );
    },

    /** An `Escalation` event from the ladder (held, resumed), once per activity execution. */
    async noteLadder(input: { incident: string; message: string }): Promise<void> {
      await appendTimeline(input.incident, [
        {
          key: idempotencyKey('timeline'),
          event: { timestamp: new Date(), type: 'Escalation', source: 'escalation-engine', message: input.message },
        },
      ]);
    },

    /** The maintenance window holding the ladder for this namespace now, if any. */
    async maintenanceWindow(input: {
      namespace: string;
    }): Promise<{ name: string; until: string; reason: string } | undefined> {
      const w = await maintenanceAt(input.namespace, new Date());
      return w && { name: w.name, until: new Date(w.to).toISOString(), reason: w.reason };
    },

    /** A `Notify` runbook step: the incident policy's first level with a target of the asked channel, else the chat home channel. */
    async notifyStep(input: { plan: string; index: number }): Promise<string> {
      const plan = await getPlan(input.plan);
      const action = plan?.actions[input.index];
      if (!plan || action?.type !== 'Notify')
        throw new Error(`step ${input.index} of ${input.plan} is not a Notify step`);
      const incident = await mustGetIncident(plan.issueRef);
      const policy = await policyOf(incident, incident.state === 'Escalated' ? incident.escalationPolicy : undefined);
      let endpoints: Endpoint[] = [];
      for (let level = 0; level < policy.levels.length && endpoints.length === 0; level++)
        endpoints = (await endpointsOf(policy, level, new Date(), action.params.channel)).endpoints;
      const fallback = endpoints.length === 0;
      if (fallback && homeChannel) endpoints = [endpoint(['home'], { channel: 'chat' })];
      if (endpoints.length === 0)
        return `no ${action.params.channel} target in policy ${policy.name} and no chat home channel: message recorded here only`;
      const sent: string[] = [];
      for (const e of endpoints) {
        const outcome = await deliverNotification({
          incident: plan.issueRef,
          endpoint: e,
          event: 'remediation.notify',
          level: 0,
          attempt: 1,
          scope: `${plan.name}/${input.index}`,
          message: `${plan.name}: ${action.params.message}`,
        });
        sent.push(`${e.channel} ${e.target}: ${outcome}`);
      }
      const via =
        fallback && action.params.channel !== 'chat'
          ? ` (no ${action.params.channel} target in policy ${policy.name})`
          : '';
      return `${sent.join('; ')}${via}`;
    },
  };
  return { activities, escalation };
}

export type NotificationActivities = ReturnType<typeof createNotificationSteps>['activities'];
export type EscalationSteps = ReturnType<typeof createNotificationSteps>['escalation'];
