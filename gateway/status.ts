import type { Config } from '../domain/config';
import { adapterStatuses, type AdapterStatus } from '../domain/gateway-status';
import { chatQueueDepth, lastDeliveryError } from '../store/chat';

/** The active adapters with their live queue depth and last delivery error (from MongoDB). */
export async function gatewayStatus(config: Config): Promise<AdapterStatus[]> {
  const [queueDepth, lastError] = await Promise.all([chatQueueDepth(), lastDeliveryError()]);
  return adapterStatuses(config, { queueDepth, ...(lastError && { lastDeliveryError: lastError }) });
}
