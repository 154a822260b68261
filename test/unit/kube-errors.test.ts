import { ApiException } from '@kubernetes/client-node';
import { kubeErrorFacts } from '../../activities/kube/errors';

// What a failed Kubernetes call tells the classifier, from each shape client-node fails with.
describe('kubeErrorFacts', () => {
  it('reads the status and the API server Status of an ApiException', () => {
    const body = JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'deployments.apps "api" not found' });
    expect(kubeErrorFacts(new ApiException(404, 'Not Found', body, {}))).toEqual({
      status: 404,
      reason: 'NotFound',
      detail: 'deployments.apps "api" not found',
    });
  });

  it("reads the status of a refused watch (client-node's Watch: an Error with statusCode)", () => {
    expect(kubeErrorFacts(Object.assign(new Error('Forbidden'), { statusCode: 403 }))).toEqual({ status: 403 });
  });

  it('names the network failure or the timeout, never the request', () => {
    expect(kubeErrorFacts(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toEqual({
      reason: 'ECONNREFUSED',
    });
    expect(kubeErrorFacts(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))).toEqual({
      reason: 'ECONNRESET',
    });
    expect(kubeErrorFacts(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toEqual({ reason: 'Timeout' });
    // undici's own deadline on a TLS handshake that never completes
    expect(kubeErrorFacts(new TypeError('fetch failed', { cause: { code: 'UND_ERR_CONNECT_TIMEOUT' } }))).toEqual({
      reason: 'Timeout',
    });
  });
});
