import { z } from 'zod';
import { DNS_LABEL_MAX, DNS_LABEL_RE, OBJECT_NAME_MAX, OBJECT_NAME_RE } from '../domain/kube-names';

/**
 * Kubernetes' own formats where they enter (runbooks, actions, clusters, signals): names
 * (domain/kube-names.ts) and resource quantities (domain/quantity.ts parses them).
 */

/** RFC 1123 label: namespaces, container names, cluster names. */
export const dnsLabelSchema = z
  .string()
  .max(DNS_LABEL_MAX)
  .regex(DNS_LABEL_RE, 'must be a DNS label (lowercase alphanumerics and "-")');

/** RFC 1123 subdomain: object names (Deployments, pods, nodes). */
export const objectNameSchema = z
  .string()
  .max(OBJECT_NAME_MAX)
  .regex(OBJECT_NAME_RE, 'must be a Kubernetes object name');

/** An unsigned quantity as a request or limit is written: `512Mi`, `1Gi`, `500m`, `2`, `1.5`, `1e3`. */
export const quantitySchema = z
  .string()
  .regex(
    /^(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/,
    'must be a Kubernetes quantity such as "512Mi" or "500m"',
  );
