import { Schema, model } from 'mongoose';

/**
 * Encrypted cluster credentials (collection `cluster_secrets`, unique `name`), written and read
 * only by store/cluster-secrets.ts. AES-256-GCM: a random 96-bit IV per write, the 128-bit auth
 * tag, and the id of the key that sealed it so keys can rotate. No plaintext field exists.
 */
const clusterSecretSchema = new Schema(
  {
    /** spec.kubeconfigSecret of the registration, e.g. `cluster-prod-kubeconfig`. */
    name: { type: String, required: true, unique: true },
    cluster: { type: String, required: true },
    /** Fingerprint of the key (not the key): which configured key opens this document. */
    keyId: { type: String, required: true },
    algorithm: { type: String, required: true, enum: ['aes-256-gcm'] },
    iv: { type: String, required: true }, // base64
    tag: { type: String, required: true }, // base64
    ciphertext: { type: String, required: true }, // base64
    /** Grows with every write: readers cache decrypted credentials per (cluster, version). */
    version: { type: Number, required: true },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  },
  { versionKey: false },
);
clusterSecretSchema.index({ cluster: 1 });

export const ClusterSecretModel = model('ClusterSecret', clusterSecretSchema, 'cluster_secrets');
