-- auth.uid() without parsing the claims JSON (issue #38). Every user or anon transaction sets
-- request.jwt.claim.sub beside request.jwt.claims (src/database/caller.ts, as PostgREST sets
-- request.jwt.claim.*), and auth.uid() reads that setting: a policy `owner = auth.uid()` costs a
-- setting lookup per row instead of a JSON parse per row. Still one SQL expression, STABLE, no
-- SET clause and not SECURITY DEFINER, so Postgres inlines it into the policy. Where only the
-- claims are set (SQL that sets them itself), it falls back to the claims' sub.
create or replace function auth.uid() returns uuid
  language sql stable
  as $$ select coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''), nullif(auth.jwt() ->> 'sub', ''))::uuid $$;

-- realtime.allowed() checks one change for many users in one transaction, each with its claims:
-- it sets each one's sub too, or auth.uid() would answer the transaction's caller for all of them.
create or replace function realtime.allowed(tbl regclass, cmd text, image jsonb, claims text[] default null)
  returns boolean[]
  language plpgsql volatile
  as $$
declare
  rls boolean;
  rel text;
  permissive text;
  restrictive text;
  cond text;
  q text;
  ok boolean;
  n int := coalesce(array_length(claims, 1), 1);
  answer boolean[] := '{}';
  i int;
begin
  if tbl is null or image is null or not coalesce(has_table_privilege(tbl, cmd), false) then
    return array_fill(false, array[n]);
  end if;
  select c.relrowsecurity, c.relname into rls, rel from pg_class c where c.oid = tbl;
  if rls then
    select string_agg('(' || e || ')', ' or ') filter (where p.polpermissive),
           string_agg('(' || e || ')', ' and ') filter (where not p.polpermissive)
      into permissive, restrictive
      from pg_policy p,
        lateral (select coalesce(pg_get_expr(case when cmd = 'insert' then coalesce(p.polwithcheck, p.polqual) else p.polqual end, p.polrelid), 'false') as e) x
     where p.polrelid = tbl
       and p.polcmd in (case when cmd = 'insert' then 'a' else 'r' end, '*')
       and exists (select 1 from unnest(p.polroles) r where r = 0 or pg_has_role(current_user, r, 'member'));
    cond := coalesce('(' || permissive || ')', 'false') || coalesce(' and ' || restrictive, '');
  else
    cond := 'true';
  end if;
  q := format('select exists (select 1 from jsonb_populate_record(null::%s, $1) as %I where %s)', tbl, rel, cond);
  for i in 1 .. n loop
    if claims is not null then
      perform set_config('request.jwt.claims', claims[i], true);
      perform set_config('request.jwt.claim.sub', coalesce(claims[i]::jsonb ->> 'sub', ''), true);
    end if;
    execute q into ok using image;
    answer := answer || coalesce(ok, false);
  end loop;
  return answer;
end
$$;
