import { z } from 'zod';
import { RESOURCE_KINDS, RUNBOOK_CATEGORIES, SEVERITIES, SIGNAL_TYPES } from '../domain/vocabulary';

/** Foghorn's core vocabulary (domain/vocabulary.ts) as the API validates it. */
export const severitySchema = z.enum(SEVERITIES);
export const runbookCategorySchema = z.enum(RUNBOOK_CATEGORIES);
export const signalTypeSchema = z.enum(SIGNAL_TYPES);
export const resourceKindSchema = z.enum(RESOURCE_KINDS);
