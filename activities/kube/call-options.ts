import {
  Observable,
  setHeaderOptions,
  type ConfigurationOptions,
  type PatchStrategy,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { KUBE_REQUEST_TIMEOUT_MS } from '../../domain/kube-actions';

/**
 * Per-call options of a client-node API call: an abort after `timeoutMs` (client-node sets no
 * deadline, so a hung server would hang the activity), plus the Content-Type of a patch.
 */
export function callOptions(timeoutMs = KUBE_REQUEST_TIMEOUT_MS, patch?: PatchStrategy): ConfigurationOptions {
  const deadline = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(AbortSignal.timeout(timeoutMs));
      return new Observable(Promise.resolve(ctx));
    },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  const base: ConfigurationOptions = patch ? setHeaderOptions('Content-Type', patch) : {};
  return { ...base, middleware: [...(base.middleware ?? []), deadline], middlewareMergeStrategy: 'append' };
}
