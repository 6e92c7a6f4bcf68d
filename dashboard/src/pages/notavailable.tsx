// Pages whose API lands from other work: a 404 from the server shows a clear "not available
// on this server" state instead of an error.
import type { ComponentChildren } from 'preact';
import { ApiError } from '../api';
import { ErrorBox } from '../ui';

export const isMissing = (e: unknown) => e instanceof ApiError && e.status === 404 && e.code === 'ROUTE_NOT_FOUND';

export function NotAvailable({ what, endpoint }: { what: string; endpoint: string }) {
  return (
    <div class="warn" role="status">
      <p>
        <strong>{what} is not available on this server.</strong>
      </p>
      <p>
        It needs <code>{endpoint}</code>, which this Plinth version does not have: update Plinth to a version with it.
      </p>
    </div>
  );
}

/** The error of a load, or the not-available state when the endpoint does not exist. */
export function LoadState({
  error,
  what,
  endpoint,
  children,
}: {
  error: unknown;
  what: string;
  endpoint: string;
  children?: ComponentChildren;
}) {
  if (isMissing(error)) return <NotAvailable what={what} endpoint={endpoint} />;
  return (
    <>
      <ErrorBox error={error} />
      {children}
    </>
  );
}
