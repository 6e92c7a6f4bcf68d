/**
 * The error codes of the realtime protocol: in a failed subscribe ack
 * (`{ok: false, channel, error: {code, message}}`) and in `realtime:error` events.
 */
export type RealtimeErrorCode =
  | 'INVALID_MESSAGE'
  | 'UNKNOWN_EVENT'
  | 'INVALID_CHANNEL'
  | 'CHANNEL_NOT_FOUND'
  | 'SUBSCRIBE_DENIED'
  | 'PUBLISH_DENIED'
  | 'NOT_SUBSCRIBED'
  | 'TOO_MANY_SUBSCRIPTIONS'
  | 'RATE_LIMITED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'TOKEN_EXPIRED'
  | 'SESSION_ENDED'
  | 'SLOW_CONSUMER'
  | 'CHANGES_MISSED'
  | 'INTERNAL_ERROR';

export interface RealtimeError {
  code: RealtimeErrorCode;
  message: string;
}

export const rtError = (code: RealtimeErrorCode, message: string): RealtimeError => ({ code, message });
