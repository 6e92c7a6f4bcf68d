// Query parameters that may carry secrets are masked wherever a URL is logged (stdout and the
// store): any name that speaks of a key, token, secret, password, signature, credential or code
// (signed URLs' `token=`, `?apikey=` sent by mistake, OAuth codes), whatever its spelling.
const SECRET_PARAMS = /([?&][^=&]*(?:token|key|secret|passw|sig|credential|code|jwt)[^=&]*=)[^&]*/gi;

/** The URL with the values of secret-looking query parameters replaced by `[redacted]`. */
export function maskUrl(url: string): string {
  return url.includes('?') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url;
}
