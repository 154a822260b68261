import { z } from 'zod';

/**
 * Kubernetes' name rules, checked where names enter (runbooks, actions, clusters, signals):
 * catching a typo here beats a 422 from the API server halfway through a remediation.
 */

/** RFC 1123 label: namespaces, container names, cluster names. */
export const dnsLabelSchema = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label (lowercase alphanumerics and "-")');

/** RFC 1123 subdomain: object names (Deployments, pods, nodes). */
export const objectNameSchema = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a Kubernetes object name');
