// Auth › Sign-in methods: how people can sign in to apps on this project (email and password,
// providers, anonymous, MFA), what is on, and which variable changes it. Read from the public
// auth settings and the effective configuration; changed where the server runs.
import { api } from '../api';
import { Fingerprint, Icon, type IconNode, KeyRound, Mail, ShieldCheck, Users } from '../components/icons';
import { Badge, ErrorBox, PageHeader, SkeletonLines, useLoad } from '../ui';

interface PublicConfig {
  oAuthProviders: string[];
  customOAuthProviders: string[];
  requireEmailVerification: boolean;
  passwordMinLength: number;
  disableSignup: boolean;
}
interface ConfigVariable {
  name: string;
  value: string | null;
}

function Method(props: {
  icon: IconNode;
  title: string;
  on: boolean;
  children: preact.ComponentChildren;
  change: preact.ComponentChildren;
}) {
  return (
    <section class="card" aria-label={props.title}>
      <header>
        <Icon icon={props.icon} />
        <h2>{props.title}</h2>
        <Badge tone={props.on ? 'success' : 'neutral'}>{props.on ? 'On' : 'Off'}</Badge>
      </header>
      <dl>{props.children}</dl>
      <p class="change">
        <strong>To change:</strong> {props.change}
      </p>
    </section>
  );
}

export function SignInMethods() {
  const data = useLoad(async () => {
    const [pub, config] = await Promise.all([
      api<PublicConfig>('/api/auth/public-config'),
      api<{ variables: ConfigVariable[] }>('/api/admin/config'),
    ]);
    const v = (name: string) => config.variables.find((x) => x.name === name)?.value ?? null;
    return {
      pub,
      anonymous: v('AUTH_ANONYMOUS_SIGNIN') === 'true',
      smtp: v('smtp') === 'configured',
      redirects: v('AUTH_REDIRECT_URLS'),
    };
  }, []);
  const d = data.data;
  const providers = d ? [...d.pub.oAuthProviders, ...d.pub.customOAuthProviders] : [];
  return (
    <section class="stack">
      <PageHeader
        title="Sign-in methods"
        description="How people sign in to your apps. Plinth reads these settings from environment variables at start: change them where the server runs, then restart it."
      />
      <ErrorBox error={data.error} />
      {!d && !data.error && <SkeletonLines lines={6} label="Loading the sign-in methods" />}
      {d && (
        <div class="methods">
          <Method
            icon={Mail}
            title="Email and password"
            on
            change={<>Email verification: REQUIRE_EMAIL_VERIFICATION. Mail is sent through SMTP_URL.</>}
          >
            <dt>Sign-up</dt>
            <dd>{d.pub.disableSignup ? 'closed' : 'open: anyone can create an account'}</dd>
            <dt>Email verification</dt>
            <dd>{d.pub.requireEmailVerification ? 'required (a 6-digit code)' : 'not required'}</dd>
            <dt>Passwords</dt>
            <dd>at least {d.pub.passwordMinLength} characters</dd>
            <dt>Mail</dt>
            <dd>{d.smtp ? 'sent through SMTP' : 'written to the server log (SMTP_URL not set)'}</dd>
          </Method>
          <Method
            icon={KeyRound}
            title="Providers (OAuth and OpenID Connect)"
            on={providers.length > 0}
            change={<>OAUTH_PROVIDERS and, per provider, OAUTH_&lt;NAME&gt;_CLIENT_ID and _CLIENT_SECRET.</>}
          >
            <dt>Providers</dt>
            <dd>{providers.length ? providers.join(', ') : 'none'}</dd>
            <dt>Return URLs</dt>
            <dd>{d.redirects ?? 'none allowed yet (AUTH_REDIRECT_URLS)'}</dd>
          </Method>
          <Method
            icon={Users}
            title="Anonymous sign-in"
            on={d.anonymous}
            change={<>AUTH_ANONYMOUS_SIGNIN=true opens it. Off by default: it gives anyone the authenticated role.</>}
          >
            <dt>Endpoint</dt>
            <dd>
              <code>POST /api/auth/signin/anonymous</code>
            </dd>
          </Method>
          <Method
            icon={ShieldCheck}
            title="Multi-factor (TOTP)"
            on
            change="Always available: users enrol an authenticator app from your app; reset a user's factors on the Users page."
          >
            <dt>Factors</dt>
            <dd>TOTP (authenticator apps)</dd>
          </Method>
        </div>
      )}
    </section>
  );
}

export { Fingerprint };
