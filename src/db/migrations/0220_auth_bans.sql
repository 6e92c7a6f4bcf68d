-- Banned users (docs/auth.md): no sign-in of any kind while banned_until is in the future;
-- 'infinity' bans until an admin lifts it, NULL is not banned. A ban that has passed no longer
-- counts and is shown as none. ban_reason is the admin's note, never shown to the user.
alter table auth.users add column if not exists banned_until timestamptz;
alter table auth.users add column if not exists ban_reason text;
alter table auth.users drop constraint if exists users_ban_reason_length;
alter table auth.users add constraint users_ban_reason_length check (char_length(ban_reason) <= 500);
