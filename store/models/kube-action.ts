import { Schema, model, type InferSchemaType } from 'mongoose';
import { KUBE_ACTION_TYPES } from '../../domain/kube-actions';

export const KUBE_ACTION_STATES = ['pending', 'done'] as const;

/**
 * One Kubernetes action step (activities/kube-actions.ts), keyed by its idempotency key (plan +
 * step). Written before the cluster is touched with the intent: the exact values the action will
 * write and the values it found. `params`, `intent` and `result` are JSON text: they hold
 * Kubernetes keys with dots (annotations, labels) that BSON field names should not.
 */
const kubeActionSchema = new Schema(
  {
    key: { type: String, required: true, unique: true },
    action: { type: String, required: true, enum: KUBE_ACTION_TYPES },
    cluster: { type: String, required: true },
    /** `deployment payments/api` */
    target: { type: String, required: true },
    /** The canonical parameters (domain actionParams): a reused key must ask for the same thing. */
    params: { type: String, required: true },
    intent: { type: String, required: true },
    state: { type: String, required: true, enum: KUBE_ACTION_STATES },
    result: String,
    createdAt: { type: Date, required: true },
    doneAt: Date,
  },
  { versionKey: false },
);
// The rollout cool-down: the newest action on one object.
kubeActionSchema.index({ cluster: 1, target: 1, doneAt: -1 });

export type KubeActionDoc = InferSchemaType<typeof kubeActionSchema>;
export const KubeActionModel = model('KubeAction', kubeActionSchema, 'kube_actions');
