-- realtime.allowed() plans the policy query once per call instead of once per user (issue #38,
-- realtime fan-out). It checks one change for every subscribed user, one query per user with
-- that user's claims; as a dynamic EXECUTE each of those was parsed, analysed and planned again
-- (auth.uid() inlined each time: ≈ 60 µs a user, 3-8 ms of Postgres CPU for 50 users). Now the
-- query, with the row image as a constant, is prepared once per call (policies as they are now:
-- a policy change holds for the next change) and each user runs the prepared statement: every
-- EXECUTE is a statement of its own, so `(select auth.uid())` and other once-per-statement
-- values are that user's. The statement is deallocated before the call ends (and, should an
-- earlier call have failed between the two, before it is prepared again).
create or replace function realtime.allowed(tbl regclass, cmd text, image jsonb, claims text[] default null)
  returns boolean[]
  language plpgsql volatile
  as $$
declare
  rls boolean;
  rel text;
  nsp text;
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
  select c.relrowsecurity, c.relname, s.nspname into rls, rel, nsp
    from pg_class c join pg_namespace s on s.oid = c.relnamespace where c.oid = tbl;
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
  -- One check runs the query with the image bound; more are prepared with the image as a
  -- constant, parsed once (a prepared statement's EXECUTE takes no bind parameters).
  q := format('select exists (select 1 from jsonb_populate_record(null::%I.%I, %s) as %I where %s)',
              nsp, rel, case when n = 1 then '$1' else quote_literal(image) || '::jsonb' end, rel, cond);
  if n = 1 then
    -- One check: preparing would cost more than it saves.
    if claims is not null then
      perform set_config('request.jwt.claims', claims[1], true);
      perform set_config('request.jwt.claim.sub', coalesce(claims[1]::jsonb ->> 'sub', ''), true);
    end if;
    execute q into ok using image;
    return array[coalesce(ok, false)];
  end if;
  if exists (select 1 from pg_prepared_statements p where p.name = 'plinth_rt_allowed') then
    execute 'deallocate plinth_rt_allowed';
  end if;
  execute 'prepare plinth_rt_allowed as ' || q;
  for i in 1 .. n loop
    perform set_config('request.jwt.claims', claims[i], true);
    perform set_config('request.jwt.claim.sub', coalesce(claims[i]::jsonb ->> 'sub', ''), true);
    execute 'execute plinth_rt_allowed' into ok;
    answer := answer || coalesce(ok, false);
  end loop;
  execute 'deallocate plinth_rt_allowed';
  return answer;
end
$$;
