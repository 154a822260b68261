/**
 * The part of Temporal's activity options that domain/'s option constants use, declared here so
 * that domain/ imports nothing of Temporal. Workflows hand these constants to proxyActivities
 * and proxyLocalActivities, which check them against Temporal's own ActivityOptions and
 * LocalActivityOptions when the workflows compile.
 */

/** A duration as Temporal reads one (the `ms` package's format), in the units these options use: `90s`, `2m`. */
export type DurationText = `${number}${'ms' | 's' | 'm' | 'h' | 'd'}`;

export interface RetryOptions {
  initialInterval?: DurationText;
  backoffCoefficient?: number;
  maximumInterval?: DurationText;
  maximumAttempts?: number;
  nonRetryableErrorTypes?: string[];
}

export interface ActivityTimeouts {
  startToCloseTimeout?: DurationText;
  scheduleToCloseTimeout?: DurationText;
  heartbeatTimeout?: DurationText;
  retry?: RetryOptions;
}

/** A local activity has no heartbeat; retries whose back-off exceeds `localRetryThreshold` wait in a timer. */
export interface LocalActivityTimeouts {
  startToCloseTimeout?: DurationText;
  scheduleToCloseTimeout?: DurationText;
  localRetryThreshold?: DurationText;
  retry?: RetryOptions;
}
