-- Storage metadata: buckets, objects (the bytes live in the storage driver) and presigned
-- uploads waiting for confirm-upload.
create schema if not exists storage;
revoke all on schema storage from public;

create table if not exists storage.buckets (
  name text primary key,
  is_public boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table if not exists storage.objects (
  bucket text not null references storage.buckets (name) on delete cascade,
  key text collate "C" not null,
  size bigint not null,
  mime_type text not null,
  etag text,
  -- The user who uploaded it (null: an admin); private objects are readable by this user.
  uploaded_by uuid references auth.users (id) on delete set null,
  uploaded_at timestamptz not null default now(),
  primary key (bucket, key)
);
create index if not exists objects_uploaded_by_idx on storage.objects (uploaded_by);

create table if not exists storage.uploads (
  bucket text not null references storage.buckets (name) on delete cascade,
  key text collate "C" not null,
  user_id uuid references auth.users (id) on delete cascade,
  content_type text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (bucket, key)
);
