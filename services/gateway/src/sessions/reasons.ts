/** Why a sign-in session ended early (logged, and kept on the session for the audit trail). */
export const SESSION_END_REASONS = ['LOGOUT', 'REFRESH_TOKEN_REUSED', 'USER_DEACTIVATED'] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];
