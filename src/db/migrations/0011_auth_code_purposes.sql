-- Auth: two more purposes of one-time codes, for the InsForge SDK's flows.
-- sign_in: a 6-digit code mailed by POST /api/auth/email/send-otp, traded for a session.
-- reset_token: the one-time token POST /api/auth/email/exchange-reset-password-token gives
-- for a reset code, spent by POST /api/auth/email/reset-password {newPassword, otp}.
alter table auth.email_codes drop constraint if exists email_codes_purpose_check;
alter table auth.email_codes add constraint email_codes_purpose_check
  check (purpose in ('verify_email', 'reset_password', 'sign_in', 'reset_token'));
