import { z } from 'zod';
import { CLUSTER_PHASES, CLUSTER_TIERS, DEFAULT_CLUSTER_NAMESPACE, serverUrlProblem } from '../domain/cluster';
import { dnsLabelSchema } from './kubernetes';

/** Cluster registrations (spec "Cluster registration"): the body of POST /clusters, credentials checked for shape. */

export const clusterTierSchema = z.enum(CLUSTER_TIERS);
export const clusterPhaseSchema = z.enum(CLUSTER_PHASES);

/** A bearer token + server + CA, the alternative to a whole kubeconfig. */
export const clusterCredentialsSchema = z
  .object({
    server: z
      .string()
      .url('must be a URL such as https://10.0.0.1:6443')
      .superRefine((server, ctx) => {
        const problem = URL.canParse(server) ? serverUrlProblem(server) : undefined; // else .url() said it
        if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
      })
      .describe('https:// URL of the API server (http:// only to a loopback host); no user:password@'),
    token: z.string().min(1),
    caData: z.string().min(1).optional().describe('PEM of the CA (or the serving certificate) to trust'),
    insecureSkipTLSVerify: z.boolean().optional(),
  })
  .strict();
export type ClusterCredentials = z.infer<typeof clusterCredentialsSchema>;

const MAX_KUBECONFIG = 256 * 1024;

/** A registration's spec: exactly one of `kubeconfig` and `credentials`. */
export const clusterSpecSchema = z
  .object({
    displayName: z.string().trim().min(1).max(200).optional(),
    tier: clusterTierSchema.default('standard'),
    region: z.string().trim().max(100).default(''),
    kubeconfig: z.string().min(1).max(MAX_KUBECONFIG).optional().describe('kubeconfig YAML; stored encrypted'),
    credentials: clusterCredentialsSchema.optional().describe('stored encrypted'),
  })
  .strict()
  .refine((s) => (s.kubeconfig === undefined) !== (s.credentials === undefined), {
    message: 'give exactly one of kubeconfig and credentials',
  });

/** POST /clusters: metadata + spec. */
export const clusterRegistrationSchema = z
  .object({
    metadata: z
      .object({
        name: dnsLabelSchema,
        namespace: dnsLabelSchema.default(DEFAULT_CLUSTER_NAMESPACE),
      })
      .strict(),
    spec: clusterSpecSchema,
  })
  .strict();
export type ClusterRegistrationInput = z.infer<typeof clusterRegistrationSchema>;
