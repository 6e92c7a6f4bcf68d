import type { ErrorSpec } from '../spec.js';

/** Automation: schedules, database webhooks, email. */
export const AUTOMATION_ERRORS = {
  // automation: schedules, database webhooks, email
  SCHEDULE_NOT_FOUND: {
    status: 404,
    message: 'No such schedule.',
    nextActions: 'Check the id; GET /api/schedules lists schedules.',
  },
  INVALID_CRON: {
    status: 400,
    message: 'The cron expression is not valid.',
    nextActions:
      'Use 5 fields (minute hour day month weekday), 6 with seconds first, a name such as "@hourly", or "N seconds" for 1 to 59 seconds.',
  },
  INVALID_TIMEZONE: {
    status: 400,
    message: 'The time zone is not an IANA time zone.',
    nextActions: 'Use a name such as "UTC", "Europe/Paris" or "America/New_York".',
  },
  OUTBOUND_NOT_ALLOWED: {
    status: 400,
    message: 'The target URL is not allowed.',
    nextActions:
      'Use a public http(s) URL; an operator can allow an internal receiver by listing its host, host:port or CIDR in OUTBOUND_ALLOW_HOSTS.',
  },
  JOBS_UNAVAILABLE: {
    status: 503,
    message: 'Background jobs are not running on this server.',
    nextActions:
      'Run Plinth on the embedded Postgres or a Postgres server (DATABASE_URL); PGlite does not run schedules, webhooks or queued email.',
  },
  QUEUE_FULL: {
    status: 503,
    message: 'Too many jobs are waiting.',
    nextActions:
      'Try again shortly; GET /api/health?checks=true shows the queue depth and its bound (JOBS_MAX_QUEUED).',
  },
  WEBHOOK_NOT_FOUND: {
    status: 404,
    message: 'No such webhook.',
    nextActions: 'Check the id; GET /api/database/webhooks lists webhooks.',
  },
  WEBHOOK_DISABLED: {
    status: 409,
    message: 'The webhook is disabled.',
    nextActions: 'Enable it with PATCH /api/database/webhooks/{id} {"enabled": true}, then redeliver.',
  },
  DELIVERY_NOT_FOUND: {
    status: 404,
    message: 'No such delivery.',
    nextActions: 'Check the id; GET /api/database/webhooks/{id}/deliveries lists deliveries.',
  },
  EMAIL_NOT_CONFIGURED: {
    status: 503,
    message: 'Email is not configured on this server.',
    nextActions: 'The operator must set SMTP_URL (smtp://user:pass@host:587) and MAIL_FROM, then restart.',
  },
  EMAIL_NOT_ALLOWED: {
    status: 403,
    message: 'You may not send email.',
    nextActions: 'Send with the admin API key, or ask an admin to allow users to send (EMAIL_ALLOW_USERS=true).',
  },
  EMAIL_MESSAGE_NOT_FOUND: {
    status: 404,
    message: 'No such mail.',
    nextActions: 'Check the id; GET /api/email/messages (MCP list-emails) lists the queued, sent and failed mails.',
  },
  EMAIL_NOT_RESENDABLE: {
    status: 409,
    message: 'The mail cannot be resent.',
    nextActions:
      'Only failed mails whose content is still held can be resent ("resendable": true in GET /api/email/messages); send a new mail otherwise, or let the user ask for a new sign-in code.',
  },
  TEMPLATE_NOT_FOUND: {
    status: 404,
    message: 'No such email template.',
    nextActions: 'GET /api/email/templates lists the templates: verification, reset-password, magic-link.',
  },
} as const satisfies Record<string, ErrorSpec>;
