/** One active adapter of the chat gateway, as `foghorn gateway status` and `/gateway status` show it. */
export interface AdapterStatus {
  name: string;
  address: string;
  path: string;
  callbackHost: string;
  secretSet: boolean;
  queueDepth: number;
  lastDeliveryError: string;
}

/** The gateway's settings an adapter status shows (config/env.ts parses them from the environment). */
export interface GatewayConfig {
  FOGHORN_WEBHOOK_ADDR?: { host: string; port: number };
  FOGHORN_WEBHOOK_PATH: string;
  FOGHORN_WEBHOOK_CALLBACK_URL?: string;
  FOGHORN_WEBHOOK_SECRET?: string;
}

/** The adapters the configuration enables (today only `webhook`, when FOGHORN_WEBHOOK_ADDR is set). */
export function adapterStatuses(
  config: GatewayConfig,
  live: { queueDepth: number; lastDeliveryError?: { at: Date; error: string } },
): AdapterStatus[] {
  if (!config.FOGHORN_WEBHOOK_ADDR) return [];
  const { host, port } = config.FOGHORN_WEBHOOK_ADDR;
  return [
    {
      name: 'webhook',
      address: `${host}:${port}`,
      path: config.FOGHORN_WEBHOOK_PATH,
      callbackHost: config.FOGHORN_WEBHOOK_CALLBACK_URL ? new URL(config.FOGHORN_WEBHOOK_CALLBACK_URL).host : '(none)',
      secretSet: Boolean(config.FOGHORN_WEBHOOK_SECRET),
      queueDepth: live.queueDepth,
      lastDeliveryError: live.lastDeliveryError
        ? `${live.lastDeliveryError.at.toISOString()} ${live.lastDeliveryError.error}`
        : '(none)',
    },
  ];
}

/** A plain-text table for the CLI and the chat. */
export function formatAdapterStatuses(adapters: AdapterStatus[]): string {
  if (adapters.length === 0) return 'No gateway adapters are active (set FOGHORN_WEBHOOK_ADDR to start the webhook).';
  return adapters
    .map((a) =>
      [
        `adapter: ${a.name}`,
        `  address:        ${a.address}`,
        `  path:           ${a.path}`,
        `  callback host:  ${a.callbackHost}`,
        `  secret set:     ${a.secretSet ? 'yes' : 'no'}`,
        `  queue depth:    ${a.queueDepth}`,
        `  last delivery error: ${a.lastDeliveryError}`,
      ].join('\n'),
    )
    .join('\n');
}
