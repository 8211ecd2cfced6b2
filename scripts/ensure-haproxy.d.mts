/** Where haproxy is, after installing it when missing; or why it could not be installed. */
export function ensureHaproxy(): { path: string; reason?: undefined } | { path?: undefined; reason: string };
export function findHaproxy(): string | undefined;
export const HAPROXY_PATHS: string[];
