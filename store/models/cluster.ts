import { Schema, model } from 'mongoose';
import { CLUSTER_PHASES, CLUSTER_TIERS } from '../../domain/cluster';

/**
 * Cluster registrations (collection `clusters`, unique `name`: workflows, incidents and the
 * watcher name a cluster by its name alone, so a name is unique across registration
 * namespaces). Credentials are not here: `kubeconfigSecret` names the encrypted document in
 * `cluster_secrets`. `status` is written by the health activity only.
 */
const resourceUsageSchema = new Schema(
  {
    cpuCapacity: { type: String, required: true },
    cpuUsed: { type: String, required: true },
    memoryCapacity: { type: String, required: true },
    memoryUsed: { type: String, required: true },
  },
  { _id: false },
);

const clusterSchema = new Schema(
  {
    name: { type: String, required: true, unique: true },
    namespace: { type: String, required: true },
    displayName: { type: String, required: true },
    tier: { type: String, required: true, enum: CLUSTER_TIERS },
    region: { type: String, default: '' },
    kubeconfigSecret: { type: String, required: true },
    /** `registered` over the API; `environment`: the local cluster from KUBECONFIG / in-cluster. */
    source: { type: String, required: true, enum: ['registered', 'environment'] },
    createdAt: { type: Date, required: true },
    status: {
      phase: { type: String, required: true, enum: CLUSTER_PHASES, default: 'Pending' },
      connected: { type: Boolean, required: true, default: false },
      lastHealthCheck: { type: Date },
      kubernetesVersion: { type: String, default: '' },
      nodeCount: { type: Number, default: 0 },
      readyNodeCount: { type: Number, default: 0 },
      namespaceCount: { type: Number, default: 0 },
      resourceUsage: { type: resourceUsageSchema },
      /** Why the last check failed (no secrets: an error class and HTTP status at most). */
      message: { type: String, default: '' },
    },
  },
  { versionKey: false },
);
// The federation list filters by tier and sorts by name.
clusterSchema.index({ tier: 1, name: 1 });

export const ClusterModel = model('Cluster', clusterSchema, 'clusters');
