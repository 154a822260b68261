/** Every activity the worker registers; workflows import only the type. */
import { recordAudit } from './audit';

export const activities = { recordAudit };
export type Activities = typeof activities;
