// oidc-provider ships no typings; the tests use it through a few calls only.
declare module 'oidc-provider';
