/**
 * URLs that may carry credentials — a mirror's (`https://bot:<token>@host/…`), a webhook's
 * (`?token=…`) — as the service shows them: in logs, /healthz, API answers and the command
 * line, with every credential replaced by `***`. The URL itself is kept whole where it is stored.
 */

const HIDDEN = '***';

/**
 * The URL with every credential it may carry replaced by `***`, for logs, /healthz, answers
 * and the command line: a password (`user:pass@`), a user name over HTTP(S) (hosts take a token
 * as the user name: `https://<token>@host/…`), and every query parameter's value (`?access_token=…`).
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = HIDDEN;
    else if (parsed.username !== '' && parsed.protocol.startsWith('http')) parsed.username = HIDDEN;
    if (parsed.search !== '') {
      // A name without a value (`?verbose`) hides nothing.
      const query = [...parsed.searchParams]
        .map(([name, value]) => (value === '' ? encodeURIComponent(name) : `${encodeURIComponent(name)}=${HIDDEN}`))
        .join('&');
      return `${parsed.href.slice(0, parsed.href.indexOf('?'))}?${query}${parsed.hash}`;
    }
    return parsed.href;
  } catch {
    return url;
  }
}

/** The credentials `redactUrl` hides, as written in the URL and percent-decoded. */
function secretsOf(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const secrets = [parsed.password];
  if (parsed.password === '' && parsed.protocol.startsWith('http')) secrets.push(parsed.username);
  for (const value of parsed.searchParams.values()) secrets.push(value, encodeURIComponent(value));
  const decoded = secrets.map((secret) => {
    try {
      return decodeURIComponent(secret);
    } catch {
      return secret;
    }
  });
  // Shorter ones would garble the text (a user name `git`); `scheme://…@` below covers them in URLs.
  return [...new Set([...secrets, ...decoded])].filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}

/**
 * Text about a URL (a mirror's git error output) with the URL's credentials replaced: git prints
 * the URL in forms of its own (without the path, with a slash added, its query kept), so every
 * secret is replaced wherever it stands, and any `scheme://user[:password]@` left over too.
 */
export function redactSecrets(text: string, url: string): string {
  let redacted = text.split(url).join(redactUrl(url));
  for (const secret of secretsOf(url)) redacted = redacted.split(secret).join(HIDDEN);
  return redacted.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi, `$1${HIDDEN}@`);
}
