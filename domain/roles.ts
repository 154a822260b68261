/** Roles, lowest to highest (DESIGN §5). `system` is Foghorn itself and is not a user role. */
export const USER_ROLES = ['viewer', 'operator', 'admin'] as const;
export type UserRole = (typeof USER_ROLES)[number];
export type Role = UserRole | 'system';

const rank: Record<UserRole, number> = { viewer: 0, operator: 1, admin: 2 };

/** True when `role` may do what `required` may; `system` never passes a user-only check. */
export function roleAtLeast(role: Role, required: UserRole): boolean {
  return role !== 'system' && rank[role] >= rank[required];
}

/** Who did something: recorded in audit records and annotations. */
export interface Principal {
  user: string;
  role: Role;
}

export const SYSTEM: Principal = { user: 'system', role: 'system' };
