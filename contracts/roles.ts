import { z } from 'zod';
import { USER_ROLES } from '../domain/roles';

/** A user role as tokens and the gateway's configuration give it. */
export const userRoleSchema = z.enum(USER_ROLES);
