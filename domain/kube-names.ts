/**
 * Kubernetes' name rules, checked where names enter (runbooks, actions, clusters, signals):
 * catching a typo there beats a 422 from the API server halfway through a remediation. The
 * schemas built on them are in contracts/kubernetes.ts.
 */

/** RFC 1123 label: namespaces, container names, cluster names. */
export const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_LABEL_MAX = 63;

/** RFC 1123 subdomain: object names (Deployments, pods, nodes). */
export const OBJECT_NAME_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const OBJECT_NAME_MAX = 253;

export const isDnsLabel = (text: string): boolean => text.length <= DNS_LABEL_MAX && DNS_LABEL_RE.test(text);
export const isObjectName = (text: string): boolean => text.length <= OBJECT_NAME_MAX && OBJECT_NAME_RE.test(text);
